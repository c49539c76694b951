import FoundationEssentials
import Glibc

/// A subject public key, identified by its DER `SubjectPublicKeyInfo`.
///
/// Public-key pinning (curl `--pinnedpubkey`, OkHttp, TrustKit, HPKP) compares the SHA-256 of the
/// SPKI DER, base64-encoded: ``sha256Pin``.
public struct PublicKey: Hashable, Sendable, CustomStringConvertible {
    /// The DER-encoded SubjectPublicKeyInfo.
    public let spkiDER: Data
    /// The algorithm and size, e.g. "RSA 2048" or "EC P-256".
    public let algorithm: String

    init(spkiDER: Data, description: String) {
        self.spkiDER = spkiDER
        self.algorithm = description
    }

    /// SHA-256 of the SPKI DER.
    public var sha256: Data { Data(sha256Digest([UInt8](spkiDER))) }

    /// SHA-256 of the SPKI DER in base64: the value of a `sha256/...` or `sha256//...` pin.
    public var sha256Pin: String { sha256.base64EncodedString() }

    public var description: String { "PublicKey(\(algorithm), sha256/\(sha256Pin))" }

    public static func == (lhs: PublicKey, rhs: PublicKey) -> Bool { lhs.spkiDER == rhs.spkiDER }
    public func hash(into hasher: inout Hasher) { hasher.combine(spkiDER) }
}

extension PublicKey {
    /// A pin in Sesame's `sha256/BASE64` form, from that form or curl's `sha256//BASE64`; nil when
    /// it is neither (a base64 text may itself start with "/", so the length decides).
    public static func normalizedPin(_ text: String) -> String? {
        let trimmed = text.trimmingWhitespace()
        for prefix in ["sha256/", "sha256//"] where trimmed.hasPrefix(prefix) {
            let base64 = String(trimmed.dropFirst(prefix.count))
            if Data(base64Encoded: base64)?.count == 32 { return "sha256/" + base64 }
        }
        return nil
    }
}
