/// What a connection does with the OCSP response a server staples to its handshake.
///
/// The check runs after the trust decision (whoever made it) and before the connection carries a
/// byte: TLS 1.2 sends the staple after the certificate, so it cannot be part of the decision.
/// A failed check fails the connection with ``SesameError/Code/serverTrustRejected`` and drops
/// the server's TLS session so it is not resumed without a staple.
public enum StapledOCSPPolicy: Hashable, Sendable, CustomStringConvertible {
    /// Stapling is not requested and a staple is not looked at (what `-k` uses).
    case ignore
    /// A staple, when the server sends one, must be a verified, current "good" for the leaf; a
    /// leaf marked must-staple (RFC 7633) must come with one. The default.
    case enforceWhenPresent
    /// Every server must staple a verified, current "good" for its leaf.
    case require

    public var description: String {
        switch self {
        case .ignore: "ignore"
        case .enforceWhenPresent: "enforce when present"
        case .require: "require"
        }
    }
}
