/// What a Negotiate (Kerberos) answer may do besides authenticating the user.
public struct NegotiateOptions: Sendable, Equatable {
    /// Whether the server may act as the user elsewhere with a forwarded ticket (curl's
    /// `--delegation`).
    public enum Delegation: Sendable, Equatable {
        /// Never (the default).
        case none
        /// When the realm's policy marks the server's principal `ok-as-delegate`.
        case policy
        /// Always.
        case always
    }

    /// Whether the ticket is forwarded to the server. Default ``Delegation/none``.
    public var delegation: Delegation
    /// Whether SPNEGO may fall back to NTLM through an installed GSSAPI NTLM mechanism (such as
    /// Debian's gss-ntlmssp) when Kerberos is not available. Default false: Kerberos only.
    public var allowsNTLM: Bool

    /// Kerberos only, no delegation.
    public init(delegation: Delegation = .none, allowsNTLM: Bool = false) {
        self.delegation = delegation
        self.allowsNTLM = allowsNTLM
    }
}
