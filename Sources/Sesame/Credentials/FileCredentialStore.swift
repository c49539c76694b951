import FoundationEssentials
import Glibc

/// The file behind `.permanent` credentials (DESIGN section 6): a versioned JSON document, mode
/// 0600 in a 0700 directory, replaced atomically (temporary file, fsync, rename) while an advisory
/// lock on `<file>.lock` is held, so writers in several processes take turns and each sees the
/// others' entries. A file Sesame cannot read is an error naming it, and is never overwritten.
///
/// Passwords are stored as written, protected by the file's permissions (as `.netrc` and curl's
/// files are): the store for machines without a session bus. Where a Secret Service answers,
/// ``SecretServiceCredentialStore`` keeps them encrypted in the user's keyring instead.
public struct FileCredentialStore: CredentialStore {
    static let format = "sesame-credential-store"
    static let version = 1
    static let itemsFormat = "sesame-credential-items"
    static let itemsVersion = 1

    struct Entry: Codable, Equatable, Sendable {
        var space: ProtectionSpace
        var user: String
        var password: String
        var isDefault: Bool
    }

    struct Document: StoreFileDocument {
        var format: String
        var version: Int
        var entries: [Entry]

        static var empty: Document {
            Document(format: FileCredentialStore.format, version: FileCredentialStore.version, entries: [])
        }
    }

    /// The items kept beside the passwords, in a file of their own (`credentials.items.json` beside
    /// `credentials.json`), so a Sesame that predates them reads and rewrites its file unchanged.
    struct ItemDocument: StoreFileDocument {
        var format: String
        var version: Int
        var items: [StoredItem]

        static var empty: ItemDocument {
            ItemDocument(format: FileCredentialStore.itemsFormat, version: FileCredentialStore.itemsVersion, items: [])
        }
    }

    let path: String

    /// A store in `fileURL` (created, with its folder, on the first write).
    public init(fileURL: URL) { path = fileURL.path }

    init(path: String) { self.path = path }

    /// The file.
    public var fileURL: URL { URL(fileURLWithPath: path) }
    public var location: String { path }

    /// The file of ``StoredItem``s: the store's name with `.items.json` in place of `.json`.
    public var itemsFileURL: URL { URL(fileURLWithPath: itemsPath) }

    var itemsPath: String {
        let base = path.hasSuffix(".json") ? String(path.dropLast(5)) : path
        return base + ".items.json"
    }

    private var file: StoreFile<Document> {
        StoreFile(path: path, format: Self.format, version: Self.version, name: "credential store")
    }

    private var itemFile: StoreFile<ItemDocument> {
        StoreFile(path: itemsPath, format: Self.itemsFormat, version: Self.itemsVersion, name: "credential item store")
    }

    /// The file the shared storage uses where there is no keyring: `$XDG_DATA_HOME/sesame/credentials.json`,
    /// else `~/.local/share/sesame/credentials.json`.
    public static var standard: FileCredentialStore { FileCredentialStore(path: defaultPath) }

    /// The default location: `$XDG_DATA_HOME/sesame/credentials.json`, else
    /// `~/.local/share/sesame/credentials.json`.
    static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return "\(data)/sesame/credentials.json"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? UserHome.path
        return "\(home)/.local/share/sesame/credentials.json"
    }

    /// The entries on disk (none when the file does not exist yet).
    func read() throws(SesameError) -> [Entry] { try file.read().entries }

    /// Applies `change` to the entries under the lock and writes the result; returns it.
    @discardableResult
    func modify(_ change: (inout [Entry]) throws -> Void) throws -> [Entry] {
        try file.modify { document in try change(&document.entries) }.entries
    }

    /// The entries of a store file's bytes (internal for the fuzzer: `Fuzz/CredentialStoreFuzz.swift`).
    func decode(_ bytes: [UInt8]) throws(SesameError) -> [Entry] { try file.decode(bytes).entries }

    /// The items of an item file's bytes (internal for the fuzzer, as ``decode(_:)``).
    func decodeItems(_ bytes: [UInt8]) throws(SesameError) -> [StoredItem] { try itemFile.decode(bytes).items }

    // MARK: - CredentialStore

    public func entries(for spaces: [ProtectionSpace]?) throws(SesameError) -> [StoredCredential] {
        let wanted = spaces.map(Set.init)
        return try read().compactMap { entry in
            guard wanted?.contains(entry.space) ?? true else { return nil }
            return StoredCredential(
                protectionSpace: entry.space,
                user: entry.user,
                password: entry.password,
                isDefault: entry.isDefault
            )
        }
    }

    public func save(_ stored: StoredCredential) throws(SesameError) {
        let space = stored.protectionSpace
        try modifyTyped { entries in
            let isDefault =
                stored.isDefault || entries.first { $0.space == space && $0.user == stored.user }?.isDefault == true
            if stored.isDefault {
                for index in entries.indices where entries[index].space == space { entries[index].isDefault = false }
            }
            entries.removeAll { $0.space == space && $0.user == stored.user }
            entries.append(.init(space: space, user: stored.user, password: stored.password, isDefault: isDefault))
        }
    }

    public func setDefault(user: String?, for space: ProtectionSpace) throws(SesameError) -> Bool {
        var found = user == nil
        try modifyTyped { entries in
            found = found || entries.contains { $0.space == space && $0.user == user }
            guard found else { return }
            for index in entries.indices where entries[index].space == space {
                entries[index].isDefault = entries[index].user == user
            }
        }
        return found
    }

    public func remove(user: String, from space: ProtectionSpace) throws(SesameError) -> Bool {
        guard try read().contains(where: { $0.space == space && $0.user == user }) else { return false }
        var removed = false
        try modifyTyped { entries in
            let before = entries.count
            entries.removeAll { $0.space == space && $0.user == user }
            removed = entries.count != before
        }
        return removed
    }

    // MARK: - Items

    public func items(ofClass itemClass: String) throws(SesameError) -> [StoredItem] {
        try itemFile.read().items.filter { $0.itemClass == itemClass }
    }

    public func modifyItems(
        ofClass itemClass: String,
        _ change: ([StoredItem]) throws(SesameError) -> [StoredItem]
    ) throws(SesameError) {
        try itemFile.modifyTyped { document throws(SesameError) in
            let mine = document.items.filter { $0.itemClass == itemClass }
            let changed = try change(mine)
            try StoredItemChanges.validate(changed, ofClass: itemClass)
            let others = document.items.filter { $0.itemClass != itemClass }
            let taken = Set(others.map(\.id))
            if let clash = changed.first(where: { taken.contains($0.id) }) {
                throw SesameError(.invalidArgument, "\(clash) has the identifier of an item of another class")
            }
            document.items = others + changed
        }
    }

    private func modifyTyped(_ change: (inout [Entry]) -> Void) throws(SesameError) {
        try file.modifyTyped { document in change(&document.entries) }
    }
}
