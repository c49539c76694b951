/// One reason a certificate chain was not trusted.
public struct TrustFailureReason: Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: String, Hashable, Sendable {
        case expired = "expired"
        case notYetValid = "not yet valid"
        case hostnameMismatch = "hostname mismatch"
        case untrustedRoot = "untrusted root"
        case selfSigned = "self-signed"
        case invalidCertificateAuthority = "invalid CA certificate"
        case pathLengthExceeded = "path length exceeded"
        case invalidPurpose = "not valid for TLS server authentication"
        case badSignature = "bad signature"
        case revoked = "revoked"
        /// An OCSP response for the certificate could not be trusted: bad signature, stale, not
        /// about this certificate, or "unknown".
        case invalidRevocationStatus = "invalid revocation status"
        case malformed = "malformed certificate"
        /// The chain verifies, but breaks the web PKI profile (RFC 5280, CA/Browser Forum
        /// Baseline Requirements): a CA leaf, a missing or invalid SAN, a bad key, ...
        case policyViolation = "violates the web PKI profile"
        /// Certificate-policy processing (RFC 5280 §6.1) refused the path: no acceptable policy
        /// where one is required, a policy extension that cannot be processed, or more policies
        /// than processing is bounded to.
        case certificatePolicy = "certificate policy not satisfied"
        case rejectedByDelegate = "rejected by delegate"
        case other = "other"
    }

    /// The kind of failure.
    public let kind: Kind
    /// Depth in the chain: 0 is the leaf.
    public let depth: Int
    /// The subject of the certificate at ``depth``, when known.
    public let subject: String
    /// OpenSSL's verification error code (0 when the failure is Sesame's own).
    public let openSSLCode: Int
    /// A sentence for people.
    public let message: String

    public var description: String {
        subject.isEmpty ? "\(kind.rawValue): \(message)" : "\(kind.rawValue) at depth \(depth) (\(subject)): \(message)"
    }
}
