import FoundationEssentials
import Glibc

/// Where credentials are kept between challenges (`URLCredentialStorage`).
///
/// `.forSession` credentials live in memory; `.permanent` password credentials go to the
/// storage's ``CredentialStore`` (DESIGN section 6), so other processes and later runs find them:
/// the freedesktop Secret Service (the desktop keyring, as Apple keeps them in the keychain) or a
/// private file. `.none` credentials are never stored. Client identities and trust are never
/// persisted. Methods that touch the store throw when it cannot be read or written; a corrupt
/// file is reported (naming it) and left untouched, and a keyring that fails is reported, never
/// replaced by another store for writing.
///
/// ```swift
/// let storage = try CredentialStorage(fileURL: URL(filePath: "/tmp/creds.json"))
/// try storage.setDefaultCredential(
///     Credential(user: "ada", password: "s3cret", persistence: .permanent),
///     for: ProtectionSpace(host: "api.example", port: 443, protocol: "https", realm: "api",
///                          authenticationMethod: .httpBasic))
/// ```
public final class CredentialStorage: Sendable {
    /// A change to the storage, as delivered by ``changes``.
    public struct Change: Sendable, Hashable {
        /// What happened to the protection space's credentials.
        public enum Kind: Sendable, Hashable {
            /// A credential was stored.
            case added
            /// A credential was removed.
            case removed
            /// The default credential of the space changed.
            case defaultChanged
        }
        /// What happened.
        public let kind: Kind
        /// The protection space whose credentials changed.
        public let protectionSpace: ProtectionSpace
        /// The user whose credential changed (for `defaultChanged`, the new default, if any).
        public let user: String?
    }

    private struct Memory {
        var credentials: [ProtectionSpace: [String: Credential]] = [:]
        var defaults: [ProtectionSpace: String] = [:]
        var observers: [Int: @Sendable (Change) -> Void] = [:]
        var nextObserver = 0
        /// While someone observes and the store signals changes: the watch that announces
        /// permanent changes (this process's included), in place of announcing them here.
        var watch: StoreChangeWatch?
    }

    private let memory = LockedValue(Memory())
    private let selection: CredentialStoreSelection

    /// The process-wide storage. Its store is chosen on first use: the Secret Service when
    /// libsecret loads, a session bus exists and a provider answers (reading, too, what an older
    /// Sesame wrote to the file below, until `sesame credentials migrate` moves it); else the
    /// file `$XDG_DATA_HOME/sesame/credentials.json` (or `~/.local/share/sesame/credentials.json`),
    /// created only when a `.permanent` credential is stored. A keyring that is there but fails
    /// (a D-Bus timeout) is an error on every use, not a reason to write the file.
    public static let shared = CredentialStorage(selection: .automatic(filePath: FileCredentialStore.defaultPath))

    /// A storage with nothing on disk: `.permanent` credentials are kept in memory like
    /// `.forSession` ones (for ephemeral sessions and tests).
    public init() { selection = .none }

    /// A storage whose `.permanent` credentials live in `fileURL` (created on first write).
    public convenience init(fileURL: URL) { self.init(store: FileCredentialStore(fileURL: fileURL)) }

    /// A storage whose `.permanent` credentials live in `store` (a ``SecretServiceCredentialStore``,
    /// a ``FileCredentialStore`` or one of the caller's own).
    public init(store: any CredentialStore) { selection = .fixed(store) }

    init(path: String) { selection = .fixed(FileCredentialStore(path: path)) }

    /// A storage that chooses as ``shared`` does, with `fileURL` as the file: the Secret Service
    /// when a provider answers on the session bus (the file still read), else the file.
    public static func automatic(fileURL: URL) -> CredentialStorage {
        CredentialStorage(selection: .automatic(filePath: fileURL.path))
    }

    private init(selection: CredentialStoreSelection) { self.selection = selection }

    /// Where `.permanent` credentials go (nil: memory only); for the shared storage, the store
    /// chosen on first use. Throws when the choice failed (a keyring that does not answer in time).
    public var store: (any CredentialStore)? {
        get throws(SesameError) { try selection.resolve() }
    }

    /// The credential file, when the storage's store is one.
    public var fileURL: URL? { ((try? store) as? FileCredentialStore)?.fileURL }

    // MARK: - Reading

    /// The credentials for `space`, by user name.
    public func credentials(for space: ProtectionSpace) throws -> [String: Credential] {
        var result = Self.byUser(try permanentEntries(for: [space]))
        memory.withLock { memory in
            for (user, credential) in memory.credentials[space] ?? [:] { result[user] = credential }
        }
        return result
    }

    /// Every stored credential, by protection space and then by user name.
    public var allCredentials: [ProtectionSpace: [String: Credential]] {
        get throws {
            var result: [ProtectionSpace: [String: Credential]] = [:]
            for (space, entries) in Dictionary(grouping: try permanentEntries(for: nil), by: \.protectionSpace) {
                result[space] = Self.byUser(entries)
            }
            memory.withLock { memory in
                for (space, credentials) in memory.credentials {
                    result[space, default: [:]].merge(credentials) { _, session in session }
                }
            }
            return result
        }
    }

    /// The credential used for `space` when no one chooses: the one set as default, else the only
    /// one stored for the space.
    public func defaultCredential(for space: ProtectionSpace) throws -> Credential? {
        try defaultCredential(forFirstOf: [space])
    }

    /// The credential made the space's default (``setDefaultCredential(_:for:)``, or a stored
    /// entry marked so), without ``defaultCredential(for:)``'s fallback to a space's only
    /// credential: Foundation's `URLCredentialStorage` rule.
    public func designatedDefaultCredential(for space: ProtectionSpace) throws -> Credential? {
        let entries = try permanentEntries(for: [space])
        let (sessionDefault, sessionCredentials) = memory.withLock { memory in
            (memory.defaults[space], memory.credentials[space] ?? [:])
        }
        if let user = sessionDefault, let credential = sessionCredentials[user] { return credential }
        return entries.first { $0.protectionSpace == space && $0.isDefault }?.credential
    }

    /// The default credential of the first of `spaces` that has one, reading the store once (a
    /// challenge tries several spellings of its space).
    func defaultCredential(forFirstOf spaces: [ProtectionSpace]) throws -> Credential? {
        let entries = try permanentEntries(for: spaces)
        for space in spaces {
            let (sessionDefault, sessionCredentials) = memory.withLock { memory in
                (memory.defaults[space], memory.credentials[space] ?? [:])
            }
            if let user = sessionDefault, let credential = sessionCredentials[user] { return credential }
            let permanent = entries.filter { $0.protectionSpace == space }
            if let entry = permanent.first(where: \.isDefault) { return entry.credential }
            let all = Self.byUser(permanent).merging(sessionCredentials) { _, session in session }
            if all.count == 1, let only = all.first?.value { return only }
        }
        return nil
    }

    // MARK: - Writing

    /// Stores `credential` for `space` according to its persistence (`.none`: nothing is stored).
    public func set(_ credential: Credential, for space: ProtectionSpace) throws {
        try store(credential, for: space, makeDefault: false)
    }

    /// Stores `credential` for `space` and makes it the space's default.
    public func setDefaultCredential(_ credential: Credential, for space: ProtectionSpace) throws {
        try store(credential, for: space, makeDefault: true)
    }

    /// Removes the credential with `credential`'s user name (or identity) from `space`, in memory
    /// and on disk.
    public func remove(_ credential: Credential, for space: ProtectionSpace) throws {
        let key = Self.key(credential)
        if let store = try store, let user = credential.user, try store.remove(user: user, from: space) {
            announcePermanent(Change(kind: .removed, protectionSpace: space, user: user))
        }
        let removedFromMemory = memory.withLock { memory -> Bool in
            guard memory.credentials[space]?.removeValue(forKey: key) != nil else { return false }
            if memory.credentials[space]?.isEmpty == true { memory.credentials[space] = nil }
            if memory.defaults[space] == key { memory.defaults[space] = nil }
            return true
        }
        if removedFromMemory { notify(Change(kind: .removed, protectionSpace: space, user: credential.user)) }
    }

    /// Changes as they happen. Where the store signals changes (the Secret Service), changes to
    /// permanent credentials made by other processes are announced too, shortly after they
    /// happen; elsewhere (the file) another process's writes are seen on the next read, but not
    /// announced. Each access makes a new stream; it ends when the consumer stops.
    public var changes: AsyncStream<Change> {
        let (stream, continuation) = AsyncStream.makeStream(of: Change.self, bufferingPolicy: .bufferingNewest(256))
        let observation = observeChanges { continuation.yield($0) }
        continuation.onTermination = { _ in observation.cancel() }
        return stream
    }

    /// Calls `handler` for each change: for a change made through this storage, before the
    /// method that made it returns (on the caller's thread); for another process's change to the
    /// store, when the store's signal arrives. Changes stop when the observation is cancelled or
    /// released.
    public func observeChanges(_ handler: @escaping @Sendable (Change) -> Void) -> ChangeObservation {
        let (id, first) = memory.withLock { memory -> (Int, Bool) in
            memory.nextObserver += 1
            memory.observers[memory.nextObserver] = handler
            return (memory.nextObserver, memory.observers.count == 1)
        }
        if first { startWatching() }
        return ChangeObservation { [weak self] in self?.stopObserving(id) }
    }

    /// An observation from ``observeChanges(_:)``: cancelled by ``cancel()`` or when released.
    public final class ChangeObservation: Sendable {
        private let ending: LockedValue<(@Sendable () -> Void)?>

        init(_ end: @escaping @Sendable () -> Void) { ending = LockedValue(end) }

        /// Stops the changes (idempotent).
        public func cancel() {
            let end = ending.withLock { end -> (@Sendable () -> Void)? in
                defer { end = nil }
                return end
            }
            end?()
        }

        deinit { cancel() }
    }

    private func stopObserving(_ id: Int) {
        let idle = memory.withLock { memory -> StoreChangeWatch? in
            memory.observers.removeValue(forKey: id)
            guard memory.observers.isEmpty else { return nil }
            defer { memory.watch = nil }
            return memory.watch
        }
        idle?.stop()
    }

    private func startWatching() {
        guard let store = try? store else { return }
        let watch = StoreChangeWatch(store: store) { [weak self] changes in
            for change in changes { self?.notify(change) }
        }
        guard let watch else { return }
        let kept = memory.withLock { memory -> Bool in
            guard memory.watch == nil, !memory.observers.isEmpty else { return false }
            memory.watch = watch
            return true
        }
        if !kept { watch.stop() }
    }

    /// A change this storage made to the store: announced now. While the store is watched, the
    /// watch reads the store again at once, which announces it (and anything another process
    /// changed meanwhile) and keeps the later signal for it from announcing it twice.
    private func announcePermanent(_ changes: Change...) {
        if let watch = memory.withLock({ $0.watch }) {
            watch.refresh()
        } else {
            for change in changes { notify(change) }
        }
    }

    // MARK: - Internal

    private func store(_ credential: Credential, for space: ProtectionSpace, makeDefault: Bool) throws {
        guard credential.persistence != .none, credential.serverTrust == nil else { return }
        let key = Self.key(credential)
        let added = Change(kind: .added, protectionSpace: space, user: credential.user)
        let defaultChanged = Change(kind: .defaultChanged, protectionSpace: space, user: credential.user)
        if credential.persistence == .permanent, let store = try store, let user = credential.user {
            guard let password = credential.password else {
                throw SesameError(.invalidArgument, "a permanent credential for '\(user)' needs a password")
            }
            try store.save(
                StoredCredential(protectionSpace: space, user: user, password: password, isDefault: makeDefault)
            )
            // A session copy with the same user would shadow the new permanent one.
            memory.withLock { memory in
                if memory.credentials[space]?[key]?.persistence == .forSession {
                    memory.credentials[space]?[key] = nil
                }
                if makeDefault { memory.defaults[space] = nil }
            }
            if makeDefault { announcePermanent(added, defaultChanged) } else { announcePermanent(added) }
            return
        }
        // An equal credential stored again (and already the default when asked to be) changes nothing.
        let (isNew, becomesDefault) = memory.withLock { memory -> (Bool, Bool) in
            let isNew = memory.credentials[space]?[key] != credential
            let becomesDefault = makeDefault && memory.defaults[space] != key
            memory.credentials[space, default: [:]][key] = credential
            if makeDefault { memory.defaults[space] = key }
            return (isNew, becomesDefault)
        }
        if isNew { notify(added) }
        if becomesDefault { notify(defaultChanged) }
    }

    private func permanentEntries(for spaces: [ProtectionSpace]?) throws(SesameError) -> [StoredCredential] {
        try store?.entries(for: spaces) ?? []
    }

    /// Entries by user: Sesame's own before another program's for the same user, the default first.
    private static func byUser(_ entries: [StoredCredential]) -> [String: Credential] {
        var chosen: [String: StoredCredential] = [:]
        for entry in entries {
            if let kept = chosen[entry.user],
                (kept.origin == .sesame && entry.origin != .sesame) || (kept.isDefault && !entry.isDefault)
            {
                continue
            }
            chosen[entry.user] = entry
        }
        return chosen.mapValues(\.credential)
    }

    private func notify(_ change: Change) {
        let observers = memory.withLock { Array($0.observers.values) }
        for observer in observers { observer(change) }
    }

    /// Credentials are keyed by user name (identities by their certificate's fingerprint).
    private static func key(_ credential: Credential) -> String {
        if let user = credential.user { return user }
        if let identity = credential.identity {
            return "identity:" + identity.certificate.sha256Fingerprint.base64EncodedString()
        }
        return "trust"
    }
}
