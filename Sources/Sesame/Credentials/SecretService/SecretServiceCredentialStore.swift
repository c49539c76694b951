internal import CSesameShims
import FoundationEssentials
import Glibc

/// `.permanent` passwords in the freedesktop Secret Service (GNOME Keyring, KeePassXC), as Apple
/// keeps them in the keychain: encrypted at rest, unlocked with the user's login, shared with
/// other programs through one service.
///
/// Items use Sesame's schema (`org.sesame.Credential`, matched by name), whose attributes are the protection
/// space's fields (`host`, `port`, `protocol`, `realm`, `authentication-method`, `proxy`,
/// `proxy-type`), the `user` and a `default` flag; the secret is the password; the label reads
/// "Sesame: user@host (realm)" in Seahorse. Reading also finds passwords other programs saved
/// under libsecret's network-password schema (`org.gnome.keyring.NetworkPassword`) for the same
/// server, protocol and port; those items are never rewritten or removed.
///
/// libsecret is loaded at run time. Each D-Bus call is bounded by ``timeout`` (5 s by default);
/// unlocking a locked keyring shows the provider's prompt and is bounded by ``promptTimeout``.
/// Errors say which: ``SesameError/Code-swift.struct/credentialStoreLocked``,
/// ``SesameError/Code-swift.struct/credentialStoreUnavailable`` (no libsecret, no session bus,
/// no provider), ``SesameError/Code-swift.struct/timeout``.
public struct SecretServiceCredentialStore: CredentialStore {
    /// The bound on one D-Bus call.
    public let timeout: Duration
    /// The bound on an unlock, which waits for the person at the prompt.
    public let promptTimeout: Duration
    private let library: LibSecret

    /// A store on the session bus's Secret Service. Throws when libsecret cannot be loaded; use
    /// ``probe()`` to learn whether a provider answers.
    public init(timeout: Duration = .seconds(5), promptTimeout: Duration = .seconds(60)) throws(SesameError) {
        guard timeout > .zero, promptTimeout > .zero else {
            throw SesameError(.invalidArgument, "Secret Service timeouts must be positive")
        }
        self.timeout = timeout
        self.promptTimeout = promptTimeout
        library = try LibSecret.shared.get()
    }

    public var location: String {
        usesFileBackend ? "Secret Service (libsecret's file backend)" : "Secret Service (session bus)"
    }

    /// libsecret's own file backend (`SECRET_BACKEND=file`), which needs no bus: for tests.
    private var usesFileBackend: Bool { ProcessInfo.processInfo.environment["SECRET_BACKEND"] == "file" }

    /// Checks that a session bus and a provider answer (one bounded search that shows no prompt).
    public func probe() throws(SesameError) {
        if !usesFileBackend {
            let bus: OpaquePointer?
            do {
                bus = try call("connecting to the session bus") { cancellable, error in
                    library.busGet(2, cancellable, error)  // G_BUS_TYPE_SESSION
                }
            } catch  where error.code == .credentialStoreFailed {
                throw SesameError(.credentialStoreUnavailable, "no session bus: \(error.detail)")
            }
            library.objectUnref(UnsafeMutableRawPointer(bus))
        }
        _ = try search(["host": "probe.invalid"], loadSecrets: false)
    }

    // MARK: - CredentialStore

    public func entries(for spaces: [ProtectionSpace]?) throws(SesameError) -> [StoredCredential] {
        guard let spaces else { return try allEntries() }
        var result: [StoredCredential] = []
        var searched = Set<[String: String]>()
        for space in spaces {
            let query = SecretServiceAttributes.query(for: space)
            guard searched.insert(query).inserted else { continue }
            for item in try search(query) {
                guard let (found, user, isDefault) = SecretServiceAttributes.entry(from: item.attributes),
                    spaces.contains(found), let password = item.secret
                else { continue }
                result.append(
                    StoredCredential(protectionSpace: found, user: user, password: password, isDefault: isDefault)
                )
            }
        }
        // The spellings of one challenge's space share a server: one search serves them all.
        var networkItems: [[String: String]: [Item]] = [:]
        for space in spaces {
            guard let query = SecretServiceAttributes.networkQuery(for: space) else { continue }
            if networkItems[query] == nil { networkItems[query] = try search(query, schema: .network) }
            for item in networkItems[query] ?? [] {
                guard let user = SecretServiceAttributes.networkUser(item.attributes, answering: space),
                    let password = item.secret
                else { continue }
                result.append(
                    StoredCredential(protectionSpace: space, user: user, password: password, origin: .networkPassword)
                )
            }
        }
        return result
    }

    public func save(_ entry: StoredCredential) throws(SesameError) {
        guard entry.origin == .sesame else {
            throw SesameError(
                .invalidArgument,
                "\(entry) belongs to another program's schema; Sesame does not rewrite it"
            )
        }
        let space = entry.protectionSpace
        let existing = try sesameItems(in: space)
        let isDefault = entry.isDefault || existing.contains { $0.user == entry.user && $0.isDefault }
        // Written before anything is cleared, so a failure part-way never loses a password: at
        // worst an old item stays beside the new one, and reading prefers the default.
        try store(space: space, user: entry.user, password: entry.password, isDefault: isDefault)
        try clear(SecretServiceAttributes.attributes(for: space, user: entry.user, isDefault: !isDefault))
        if entry.isDefault {
            for other in existing where other.user != entry.user && other.isDefault {
                try store(space: space, user: other.user, password: other.password, isDefault: false)
                try clear(SecretServiceAttributes.attributes(for: space, user: other.user, isDefault: true))
            }
        }
    }

    public func setDefault(user: String?, for space: ProtectionSpace) throws(SesameError) -> Bool {
        let existing = try sesameItems(in: space)
        guard user == nil || existing.contains(where: { $0.user == user }) else { return false }
        for item in existing where item.isDefault != (item.user == user) {
            try store(space: space, user: item.user, password: item.password, isDefault: item.user == user)
            try clear(SecretServiceAttributes.attributes(for: space, user: item.user, isDefault: item.isDefault))
        }
        return true
    }

    public func remove(user: String, from space: ProtectionSpace) throws(SesameError) -> Bool {
        let found = try sesameItems(in: space).contains { $0.user == user }
        // Both flags: an interrupted save may have left the user's item twice.
        for isDefault in [true, false] {
            try clear(SecretServiceAttributes.attributes(for: space, user: user, isDefault: isDefault))
        }
        return found
    }

    /// Items created, deleted or changed in any collection, by any process (the service's
    /// signals); nil for libsecret's file backend, which sends none, or without a session bus.
    public var externalChanges: AsyncStream<Void>? {
        guard !usesFileBackend, let (watcher, stream) = try? SecretServiceWatcher.start(library: library) else {
            return nil
        }
        return watcher.wrap(stream)
    }

    // MARK: - Stored items

    public func items(ofClass itemClass: String) throws(SesameError) -> [StoredItem] {
        try search(["class": itemClass], schema: .items).compactMap { found in
            found.secret.flatMap { SecretServiceAttributes.item(from: found.attributes, secret: $0) }
        }
    }

    public func modifyItems(
        ofClass itemClass: String,
        _ change: ([StoredItem]) throws(SesameError) -> [StoredItem]
    ) throws(SesameError) {
        let before = try items(ofClass: itemClass)
        let after = try change(before)
        try StoredItemChanges.validate(after, ofClass: itemClass)
        let changes = StoredItemChanges(from: before, to: after)
        // Written before anything is removed: a failure part-way loses nothing.
        for item in changes.written {
            try store(
                schema: .items,
                ["class": item.itemClass, "id": item.id],
                label: item.label.isEmpty ? "Sesame: \(item.itemClass) item" : item.label,
                secret: try SecretServiceAttributes.secret(of: item),
                purpose: "storing \(item)"
            )
        }
        for id in changes.removed { try clear(["class": itemClass, "id": id], schema: .items) }
    }

    // MARK: - Items

    private func allEntries() throws(SesameError) -> [StoredCredential] {
        var result: [StoredCredential] = []
        for query in SecretServiceAttributes.allQueries {
            for item in try search(query) {
                guard let (space, user, isDefault) = SecretServiceAttributes.entry(from: item.attributes),
                    let password = item.secret
                else { continue }
                result.append(
                    StoredCredential(protectionSpace: space, user: user, password: password, isDefault: isDefault)
                )
            }
        }
        for item in try search(SecretServiceAttributes.allNetworkQuery, schema: .network) {
            guard let (space, user) = SecretServiceAttributes.networkSpace(item.attributes), let password = item.secret
            else { continue }
            result.append(
                StoredCredential(protectionSpace: space, user: user, password: password, origin: .networkPassword)
            )
        }
        return result
    }

    /// Sesame's items of exactly `space`, one per user (the default one when two are left over).
    private func sesameItems(in space: ProtectionSpace) throws(SesameError) -> [StoredCredential] {
        var byUser: [String: StoredCredential] = [:]
        for item in try search(SecretServiceAttributes.query(for: space)) {
            guard let (found, user, isDefault) = SecretServiceAttributes.entry(from: item.attributes),
                found == space, let password = item.secret
            else { continue }
            if let kept = byUser[user], kept.isDefault, !isDefault { continue }
            byUser[user] = StoredCredential(
                protectionSpace: space,
                user: user,
                password: password,
                isDefault: isDefault
            )
        }
        return byUser.values.sorted { $0.user < $1.user }
    }

    private struct Item {
        var attributes: [String: String]
        var secret: String?
    }

    /// The items matching `query`; a locked keyring is unlocked (with the provider's prompt)
    /// before its items are read, and stays an error when it cannot be.
    private func search(
        _ query: [String: String],
        schema: SecretServiceSchema = .sesame,
        loadSecrets: Bool = true
    ) throws(SesameError) -> [Item] {
        let found = try searchOnce(query, schema: schema, loadSecrets: loadSecrets)
        guard !found.locked.isEmpty else { return found.items }
        try unlock(found.locked)
        let again = try searchOnce(query, schema: schema, loadSecrets: loadSecrets)
        guard again.locked.isEmpty else {
            for object in again.locked { library.objectUnref(object) }
            throw SesameError(
                .credentialStoreLocked,
                "\(again.locked.count) keyring item(s) for this search are in a locked keyring that was not unlocked (the prompt was dismissed or could not be shown); nothing was read or changed"
            )
        }
        return again.items
    }

    private func searchOnce(
        _ query: [String: String],
        schema: SecretServiceSchema,
        loadSecrets: Bool
    ) throws(SesameError) -> (items: [Item], locked: [UnsafeMutableRawPointer]) {
        let table = SecretAttributeTable(query, library: library)
        // SECRET_SEARCH_ALL (2); SECRET_SEARCH_LOAD_SECRETS (8) when secrets are read. Never
        // SECRET_SEARCH_UNLOCK: an unlock prompt gets its own, longer bound.
        let flags: Int32 = loadSecrets ? 2 | 8 : 2
        let list = try call("searching the keyring") { cancellable, error in
            library.searchv(schema.pointer, table.table, flags, cancellable, error)
        }
        var items: [Item] = []
        var locked: [UnsafeMutableRawPointer] = []
        var node = list
        defer {
            var node = list
            while let current = node {
                library.objectUnref(current.pointee.data)
                node = current.pointee.next
            }
            library.listFree(list)
        }
        while let current = node {
            node = current.pointee.next
            guard let object = current.pointee.data else { continue }
            let handle = OpaquePointer(object)
            if library.typeCheckInstanceIsA(handle, library.itemType()) != 0, library.itemLocked(handle) != 0 {
                locked.append(library.objectRef(object) ?? object)  // released by `unlock` or `release`
                continue
            }
            let attributes = library.retrievableAttributes(handle)
            var item = Item(attributes: SecretAttributeTable.read(attributes, library: library))
            library.hashTableUnref(attributes)
            if loadSecrets {
                do {
                    item.secret = try secret(of: handle)
                } catch {
                    for object in locked { library.objectUnref(object) }  // no unlock will follow
                    throw error
                }
            }
            items.append(item)
        }
        return (items, locked)
    }

    private func secret(of retrievable: OpaquePointer) throws(SesameError) -> String? {
        // A D-Bus item already holds the secret the search loaded (one call for all items);
        // anything else (the file backend's items) is asked.
        let loaded =
            library.typeCheckInstanceIsA(retrievable, library.itemType()) != 0 ? library.itemSecret(retrievable) : nil
        let value: OpaquePointer?
        if let loaded {
            value = loaded
        } else {
            value = try call("reading a keyring secret") { cancellable, error in
                library.retrieveSecret(retrievable, cancellable, error)
            }
        }
        defer { if let value { library.valueUnref(value) } }
        guard let value, let text = library.valueText(value) else { return nil }
        return String(cString: text)
    }

    /// Unlocks the items (and frees the references the search left for them).
    private func unlock(_ objects: [UnsafeMutableRawPointer]) throws(SesameError) {
        var list: LibSecret.GList?
        for object in objects { list = library.listAppend(list, object) }
        defer {
            for object in objects { library.objectUnref(object) }
            library.listFree(list)
        }
        let service = try call("connecting to the Secret Service") { cancellable, error in
            library.serviceGet(0, cancellable, error)
        }
        defer { library.objectUnref(UnsafeMutableRawPointer(service)) }
        _ = try call("unlocking the keyring", timeout: promptTimeout) { cancellable, error in
            library.serviceUnlock(service, list, cancellable, nil, error)
        }
    }

    private func store(space: ProtectionSpace, user: String, password: String, isDefault: Bool) throws(SesameError) {
        try store(
            schema: .sesame,
            SecretServiceAttributes.attributes(for: space, user: user, isDefault: isDefault),
            label: SecretServiceAttributes.label(for: space, user: user),
            secret: password,
            purpose: "storing the credential for \(user) in \(space)"
        )
    }

    /// Stores `secret` under `attributes`, replacing the item with the same attributes.
    private func store(
        schema: SecretServiceSchema,
        _ attributes: [String: String],
        label: String,
        secret: String,
        purpose: String
    ) throws(SesameError) {
        try unlockDefaultCollection()
        let table = SecretAttributeTable(attributes, library: library)
        // Storing may prompt (to create a keyring where none exists): the prompt's bound applies.
        _ = try call(purpose, timeout: promptTimeout) { cancellable, error in
            library.storev(schema.pointer, table.table, nil, label, secret, cancellable, error)
        }
    }

    private func clear(_ attributes: [String: String], schema: SecretServiceSchema = .sesame) throws(SesameError) {
        let table = SecretAttributeTable(attributes, library: library)
        _ = try call("removing an item from the keyring") { cancellable, error in
            library.clearv(schema.pointer, table.table, cancellable, error)
        }
    }

    /// Before a write: the default collection, when locked, is unlocked with the provider's prompt.
    private func unlockDefaultCollection() throws(SesameError) {
        guard !usesFileBackend else { return }
        let service = try call("connecting to the Secret Service") { cancellable, error in
            library.serviceGet(0, cancellable, error)
        }
        defer { library.objectUnref(UnsafeMutableRawPointer(service)) }
        let collection = try call("finding the default keyring") { cancellable, error in
            library.collectionForAlias(service, "default", 0, cancellable, error)
        }
        guard let collection else { return }  // none yet: storing creates it (with a prompt)
        defer { library.objectUnref(UnsafeMutableRawPointer(collection)) }
        guard library.collectionLocked(collection) != 0 else { return }
        let list = library.listAppend(nil, UnsafeMutableRawPointer(collection))
        defer { library.listFree(list) }
        let unlocked = try call("unlocking the default keyring", timeout: promptTimeout) { cancellable, error in
            library.serviceUnlock(service, list, cancellable, nil, error)
        }
        guard unlocked > 0 else {
            throw SesameError(
                .credentialStoreLocked,
                "the default keyring is locked and was not unlocked (the prompt was dismissed or could not be shown); nothing was stored"
            )
        }
    }

    private func call<Result>(
        _ purpose: String,
        timeout: Duration? = nil,
        _ body: (OpaquePointer?, LibSecret.GErrorOut) -> Result
    ) throws(SesameError) -> Result {
        try SecretServiceCall(library: library, timeout: timeout ?? self.timeout, purpose: purpose).run(body)
    }
}
