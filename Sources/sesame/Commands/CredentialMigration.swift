import FoundationEssentials
import Sesame

/// `sesame credentials migrate [--to secret-service|file] [--credential-store FILE]`: moves
/// Sesame's permanent credentials from the file into the keyring (or back). Every entry is copied,
/// then read back from the destination and compared; only when all compare equal are they
/// removed from the source, so an interrupted or failed migration leaves the source as it was.
enum CredentialMigration {
    static func run(to destinationName: String, file path: String?) throws {
        let keyring = try CredentialStoreOption.secretService()
        let file = path.map { FileCredentialStore(fileURL: URL(fileURLWithPath: $0)) } ?? .standard
        let (source, destination): (any CredentialStore, any CredentialStore) =
            destinationName == "file" ? (keyring, file) : (file, keyring)
        // Only Sesame's own entries move; another program's keyring items stay where they are.
        let entries = try source.entries(for: nil).filter { $0.origin == .sesame }
        guard !entries.isEmpty else {
            print("nothing to migrate: \(source.location) holds no Sesame credential")
            return
        }
        for entry in entries { try destination.save(entry) }
        try verify(entries, in: destination)
        for entry in entries {
            _ = try source.remove(user: entry.user, from: entry.protectionSpace)
        }
        print("moved \(entries.count) credential(s) from \(source.location) to \(destination.location):")
        for entry in entries.sorted(by: { $0.description < $1.description }) { print("  \(entry)") }
    }

    /// Every entry is in `destination` with the same password and default flag.
    private static func verify(_ entries: [StoredCredential], in destination: any CredentialStore) throws {
        let copies = try destination.entries(for: Array(Set(entries.map(\.protectionSpace))))
        for entry in entries {
            let found = copies.contains {
                $0.origin == .sesame && $0.protectionSpace == entry.protectionSpace && $0.user == entry.user
                    && $0.password == entry.password && (!entry.isDefault || $0.isDefault)
            }
            guard found else {
                throw CommandError(
                    "\(entry) did not read back the same from \(destination.location); the source was left untouched"
                )
            }
        }
    }
}
