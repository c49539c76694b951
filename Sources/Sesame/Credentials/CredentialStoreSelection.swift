import FoundationEssentials
import Glibc

/// How a ``CredentialStorage`` finds its persistent store: none, a given one, or, for the shared
/// storage, the Secret Service when one answers and the file otherwise, chosen on first use.
final class CredentialStoreSelection: Sendable {
    private enum Rule {
        case none
        case fixed(any CredentialStore)
        case automatic(filePath: String)
    }

    private let rule: Rule
    /// The automatic choice once made (a failed probe is not kept: the next use asks again).
    private let chosen = LockedValue<(any CredentialStore)?>(nil)

    static let none = CredentialStoreSelection(.none)
    static func fixed(_ store: any CredentialStore) -> CredentialStoreSelection { .init(.fixed(store)) }
    static func automatic(filePath: String) -> CredentialStoreSelection { .init(.automatic(filePath: filePath)) }

    private init(_ rule: Rule) { self.rule = rule }

    func resolve() throws(SesameError) -> (any CredentialStore)? {
        switch rule {
        case .none:
            return nil
        case .fixed(let store):
            return store
        case .automatic(let filePath):
            // Chosen under the lock, so two first uses probe once.
            return try chosen.withLock { chosen -> Result<any CredentialStore, SesameError> in
                if let chosen { return .success(chosen) }
                let result = Result { () throws(SesameError) in
                    try Self.choose(file: FileCredentialStore(path: filePath))
                }
                if case .success(let store) = result { chosen = store }
                return result
            }.get()
        }
    }

    /// The Secret Service (reading the file too) when a provider answers; the file when there is
    /// no libsecret, no session bus or no provider; an error for anything else, so that a keyring
    /// that is there but failing is never silently replaced by the file for writing.
    static func choose(file: FileCredentialStore) throws(SesameError) -> any CredentialStore {
        let keyring: SecretServiceCredentialStore
        do {
            keyring = try SecretServiceCredentialStore()
            try keyring.probe()
        } catch  where error.code == .credentialStoreUnavailable {
            return file
        }
        return KeyringWithFileStore(keyring: keyring, file: file)
    }
}

/// The Secret Service, with the file an older Sesame (or a machine without a keyring) wrote still
/// read: writes go to the keyring; an entry only the file has is found until it is migrated; a
/// removal removes it from both.
struct KeyringWithFileStore: CredentialStore {
    let keyring: SecretServiceCredentialStore
    let file: FileCredentialStore

    var location: String { "\(keyring.location), also reading \(file.location)" }

    func entries(for spaces: [ProtectionSpace]?) throws(SesameError) -> [StoredCredential] {
        let primary = try keyring.entries(for: spaces)
        let held = Set(primary.filter { $0.origin == .sesame }.map { Key(space: $0.protectionSpace, user: $0.user) })
        let older = try file.entries(for: spaces).filter {
            !held.contains(Key(space: $0.protectionSpace, user: $0.user))
        }
        return primary + older
    }

    func save(_ entry: StoredCredential) throws(SesameError) { try keyring.save(entry) }

    var externalChanges: AsyncStream<Void>? { keyring.externalChanges }

    func setDefault(user: String?, for space: ProtectionSpace) throws(SesameError) -> Bool {
        if try keyring.setDefault(user: user, for: space) { return true }
        // Only the file has it: the keyring gets a copy as the default; the file is left as it is.
        guard let user, var entry = try file.entries(for: [space]).first(where: { $0.user == user }) else {
            return false
        }
        entry.isDefault = true
        try keyring.save(entry)
        return true
    }

    func remove(user: String, from space: ProtectionSpace) throws(SesameError) -> Bool {
        let fromKeyring = try keyring.remove(user: user, from: space)
        let fromFile = try file.remove(user: user, from: space)
        return fromKeyring || fromFile
    }

    /// The keyring's items, and those only the file has (until they are changed, which writes
    /// them to the keyring); a removal removes from both.
    func items(ofClass itemClass: String) throws(SesameError) -> [StoredItem] {
        let primary = try keyring.items(ofClass: itemClass)
        let held = Set(primary.map(\.id))
        return primary + (try file.items(ofClass: itemClass).filter { !held.contains($0.id) })
    }

    func modifyItems(
        ofClass itemClass: String,
        _ change: ([StoredItem]) throws(SesameError) -> [StoredItem]
    ) throws(SesameError) {
        let fileOnly = try file.items(ofClass: itemClass)
        // The file keeps what only it had and is unchanged; the rest goes to the keyring.
        var stayInFile = Set<String>()
        try keyring.modifyItems(ofClass: itemClass) { inKeyring throws(SesameError) in
            let held = Set(inKeyring.map(\.id))
            let fileCopies = Dictionary(fileOnly.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
            let after = try change(inKeyring + fileOnly.filter { !held.contains($0.id) })
            stayInFile = Set(after.filter { !held.contains($0.id) && fileCopies[$0.id] == $0 }.map(\.id))
            return after.filter { !stayInFile.contains($0.id) }
        }
        guard fileOnly.contains(where: { !stayInFile.contains($0.id) }) else { return }
        try file.modifyItems(ofClass: itemClass) { inFile in inFile.filter { stayInFile.contains($0.id) } }
    }

    private struct Key: Hashable {
        var space: ProtectionSpace
        var user: String
    }
}
