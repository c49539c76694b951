/// How long a credential that worked is remembered (`NSURLCredentialPersistence`).
public enum CredentialPersistence: String, Sendable, Hashable, Codable {
    /// Used for this request only; never stored.
    case none
    /// Kept in the session's ``CredentialStorage`` memory until the process ends.
    case forSession
    /// Written to the storage's credential file, so later processes find it. Only user-and-password
    /// credentials are ever written to disk; client identities and trust stay in memory.
    case permanent
}
