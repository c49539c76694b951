/// One reason a certificate chain was not trusted.
public struct TrustFailureReason: Hashable, Sendable, CustomStringConvertible {
    /// The kind of failure.
    public enum Kind: String, Hashable, Sendable {
        /// A certificate's validity ended before the validation date.
        case expired = "expired"
        /// A certificate's validity starts after the validation date.
        case notYetValid = "not yet valid"
        /// The leaf does not name the host.
        case hostnameMismatch = "hostname mismatch"
        /// The chain does not end at a trust root.
        case untrustedRoot = "untrusted root"
        /// The leaf is self-signed and not a trust root.
        case selfSigned = "self-signed"
        /// An issuing certificate is not a valid CA (no `basicConstraints` CA flag, or no
        /// `keyCertSign` usage).
        case invalidCertificateAuthority = "invalid CA certificate"
        /// A CA's path-length constraint is exceeded.
        case pathLengthExceeded = "path length exceeded"
        /// The extended key usage does not allow TLS server authentication.
        case invalidPurpose = "not valid for TLS server authentication"
        /// A signature in the chain does not verify, or uses an algorithm that is refused.
        case badSignature = "bad signature"
        /// A certificate is revoked by a revocation list or an OCSP response.
        case revoked = "revoked"
        /// An OCSP response for the certificate could not be trusted: bad signature, stale, not
        /// about this certificate, or "unknown".
        case invalidRevocationStatus = "invalid revocation status"
        /// A certificate could not be parsed, or breaks DER.
        case malformed = "malformed certificate"
        /// The chain verifies, but breaks the web PKI profile (RFC 5280, CA/Browser Forum
        /// Baseline Requirements): a CA leaf, a missing or invalid SAN, a bad key, ...
        case policyViolation = "violates the web PKI profile"
        /// Certificate-policy processing (RFC 5280 §6.1) refused the path: no acceptable policy
        /// where one is required, a policy extension that cannot be processed, or more policies
        /// than processing is bounded to.
        case certificatePolicy = "certificate policy not satisfied"
        /// A delegate or hook refused the server.
        case rejectedByDelegate = "rejected by delegate"
        /// Another reason, described in the failure's text.
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
