import FoundationEssentials
import Sesame

/// `--credential-store secret-service|file|PATH`: which permanent store a command uses.
enum CredentialStoreOption {
    /// The storage for the option's value; the automatic choice (``CredentialStorage/shared``)
    /// without one. `secret-service` fails here, with its cause, when no provider answers.
    static func storage(_ value: String?) throws -> CredentialStorage {
        guard let value else { return .shared }
        switch value {
        case "secret-service":
            return CredentialStorage(store: try secretService())
        case "file":
            return CredentialStorage(store: FileCredentialStore.standard)
        case "":
            throw Arguments.UsageError(description: "--credential-store is secret-service, file or a file's path")
        default:
            return CredentialStorage(store: FileCredentialStore(fileURL: URL(fileURLWithPath: value)))
        }
    }

    /// The Secret Service, checked to answer.
    static func secretService() throws -> SecretServiceCredentialStore {
        let store = try SecretServiceCredentialStore()
        try store.probe()
        return store
    }
}
