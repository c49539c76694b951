internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Sesame

/// A test public-key infrastructure generated at run time: a root CA, an intermediate CA, server
/// leaves for every trust outcome, a client CA with client certificates, and PKCS#12 export.
///
/// All validity periods are relative to ``now``, so a test that evaluates at ``now`` (or uses
/// ``referenceDate``) gets the same answer on every day. Keys are ECDSA P-256 unless a test asks
/// for RSA. Nothing is written to disk unless a test asks for files.
///
/// ```swift
/// let pki = try TestPKI(now: TestPKI.referenceDate)
/// let leaf = try pki.leaf(dnsNames: ["localhost"])
/// ```
public final class TestPKI: Sendable {
    /// A fixed clock for offline evaluations: 2026-06-01T00:00:00Z.
    public static let referenceDate = Date(timeIntervalSince1970: 1_780_272_000)

    /// The instant every validity period is relative to.
    public let now: Date
    /// The root CA ("Sesame Test Root CA").
    public let root: TestIssuedCertificate
    /// The intermediate CA under ``root`` that issues server leaves.
    public let intermediate: TestIssuedCertificate
    /// A separate root that issues client certificates ("Sesame Test Client CA").
    public let clientCA: TestIssuedCertificate
    /// A root nobody trusts, for untrusted-root leaves.
    public let untrustedRoot: TestIssuedCertificate

    /// Generates a fresh PKI.
    /// - Parameter now: the clock; defaults to the current time (what live handshakes check against).
    public init(now: Date = Date()) throws {
        self.now = now
        let day: TimeInterval = 86_400
        root = try Self.issue(
            subject: "CN=Sesame Test Root CA,O=Sesame Test",
            key: .ecdsaP256,
            issuer: nil,
            profile: .rootCA,
            notBefore: now - day,
            notAfter: now + 3650 * day
        )
        intermediate = try Self.issue(
            subject: "CN=Sesame Test Intermediate CA,O=Sesame Test",
            key: .ecdsaP256,
            issuer: root,
            profile: .intermediateCA,
            notBefore: now - day,
            notAfter: now + 1825 * day
        )
        clientCA = try Self.issue(
            subject: "CN=Sesame Test Client CA,O=Sesame Test",
            key: .ecdsaP256,
            issuer: nil,
            profile: .rootCA,
            notBefore: now - day,
            notAfter: now + 3650 * day
        )
        untrustedRoot = try Self.issue(
            subject: "CN=Sesame Untrusted Root CA,O=Nobody",
            key: .ecdsaP256,
            issuer: nil,
            profile: .rootCA,
            notBefore: now - day,
            notAfter: now + 3650 * day
        )
    }

    /// A server leaf issued by ``intermediate``.
    /// - Parameters:
    ///   - commonName: the subject CN when it is one of the SANs (as the Baseline Requirements
    ///     want); otherwise it names the leaf in the subject's OU.
    ///   - dnsNames: DNS subject alternative names.
    ///   - ipAddresses: IP subject alternative names (IPv4 or IPv6 text).
    ///   - key: the key type.
    ///   - validFrom: start of validity (default: a day before ``now``).
    ///   - validUntil: end of validity (default: 398 days after ``now``).
    ///   - mustStaple: adds the TLS Feature extension with `status_request` (RFC 7633).
    public func leaf(
        commonName: String = "localhost",
        dnsNames: [String] = ["localhost"],
        ipAddresses: [String] = ["127.0.0.1", "::1"],
        key: KeyType = .ecdsaP256,
        validFrom: Date? = nil,
        validUntil: Date? = nil,
        mustStaple: Bool = false
    ) throws -> TestIssuedCertificate {
        // A common name is a copy of a SAN (BR §7.1.4.3); another label goes in the OU.
        let isCopy = dnsNames.contains(commonName) || ipAddresses.contains(commonName)
        return try Self.issue(
            subject: isCopy ? "CN=\(commonName),O=Sesame Test" : "OU=\(commonName),O=Sesame Test",
            key: key,
            issuer: intermediate,
            profile: .serverLeaf(dnsNames: dnsNames, ipAddresses: ipAddresses),
            notBefore: validFrom ?? now - 86_400,
            notAfter: validUntil ?? now + 398 * 86_400,
            extraExtensions: mustStaple ? [("tlsfeature", "status_request")] : []
        )
    }

    /// A localhost leaf whose validity ended 30 days before ``now``.
    public func expiredLeaf() throws -> TestIssuedCertificate {
        try leaf(commonName: "expired.localhost", validFrom: now - 400 * 86_400, validUntil: now - 30 * 86_400)
    }

    /// A localhost leaf whose validity starts 30 days after ``now``.
    public func notYetValidLeaf() throws -> TestIssuedCertificate {
        try leaf(commonName: "future.localhost", validFrom: now + 30 * 86_400, validUntil: now + 400 * 86_400)
    }

    /// A leaf for `wrong.example.com` only (a valid chain, the wrong host).
    public func wrongHostLeaf() throws -> TestIssuedCertificate {
        try leaf(commonName: "wrong.example.com", dnsNames: ["wrong.example.com"], ipAddresses: [])
    }

    /// A self-signed localhost certificate (not a CA).
    public func selfSignedLeaf(key: KeyType = .ecdsaP256) throws -> TestIssuedCertificate {
        try Self.issue(
            subject: "CN=localhost,O=Sesame Self-Signed",
            key: key,
            issuer: nil,
            profile: .serverLeaf(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1", "::1"]),
            notBefore: now - 86_400,
            notAfter: now + 398 * 86_400
        )
    }

    /// A localhost leaf issued directly by ``untrustedRoot``.
    public func untrustedLeaf() throws -> TestIssuedCertificate {
        try Self.issue(
            subject: "CN=localhost,O=Nobody",
            key: .ecdsaP256,
            issuer: untrustedRoot,
            profile: .serverLeaf(dnsNames: ["localhost"], ipAddresses: ["127.0.0.1", "::1"]),
            notBefore: now - 86_400,
            notAfter: now + 398 * 86_400
        )
    }

    /// A client certificate (EKU clientAuth) issued by ``clientCA``, or by another issuer.
    public func clientCertificate(
        commonName: String = "sesame-client",
        key: KeyType = .ecdsaP256,
        issuer: TestIssuedCertificate? = nil
    ) throws -> TestIssuedCertificate {
        try Self.issue(
            subject: "CN=\(commonName),OU=Clients,O=Sesame Test",
            key: key,
            issuer: issuer ?? clientCA,
            profile: .clientLeaf,
            notBefore: now - 86_400,
            notAfter: now + 398 * 86_400
        )
    }

    /// The key algorithms the PKI can generate.
    public enum KeyType: Sendable {
        /// ECDSA on P-256.
        case ecdsaP256
        /// ECDSA on P-384.
        case ecdsaP384
        /// RSA, 2048 bits.
        case rsa2048
        /// As many public roots use (slow to generate: about a second).
        case rsa4096
        /// Weak keys the web PKI refuses, for tests of that rule.
        case ecdsaP224
        /// RSA, 1024 bits.
        case rsa1024
    }

    enum Profile {
        case rootCA
        case intermediateCA
        case serverLeaf(dnsNames: [String], ipAddresses: [String])
        case clientLeaf
        case ocspResponder
    }

    /// A certificate of `profile`: its extensions in OpenSSL's configuration syntax, then a subject
    /// key identifier and an authority key identifier (see ``issue(_:issuer:)``).
    static func issue(
        subject: String,
        key keyType: KeyType,
        issuer: TestIssuedCertificate?,
        profile: Profile,
        notBefore: Date,
        notAfter: Date,
        extraExtensions: [(String, String)] = []
    ) throws -> TestIssuedCertificate {
        var shape = Shape(subject: subject, notBefore: notBefore, notAfter: notAfter)
        shape.key = keyType
        switch profile {
        case .rootCA:
            shape.extensions = [("basicConstraints", "critical,CA:TRUE"), ("keyUsage", "critical,keyCertSign,cRLSign")]
        case .intermediateCA:
            shape.extensions = [
                ("basicConstraints", "critical,CA:TRUE,pathlen:0"), ("keyUsage", "critical,keyCertSign,cRLSign"),
            ]
        case .serverLeaf(let dnsNames, let ipAddresses):
            // The Baseline Requirements' key usages by key type (§7.1.2.7.11): an EC key only signs.
            let usage =
                [.ecdsaP256, .ecdsaP224, .ecdsaP384].contains(keyType)
                ? "digitalSignature" : "digitalSignature,keyEncipherment"
            shape.extensions = [
                ("basicConstraints", "critical,CA:FALSE"), ("keyUsage", "critical,\(usage)"),
                ("extendedKeyUsage", "serverAuth"),
            ]
            let sans = dnsNames.map { "DNS:\($0)" } + ipAddresses.map { "IP:\($0)" }
            if !sans.isEmpty { shape.extensions.append(("subjectAltName", sans.joined(separator: ","))) }
        case .ocspResponder:
            shape.extensions = [
                ("basicConstraints", "critical,CA:FALSE"), ("keyUsage", "critical,digitalSignature"),
                ("extendedKeyUsage", "OCSPSigning"),
            ]
        case .clientLeaf:
            shape.extensions = [
                ("basicConstraints", "critical,CA:FALSE"), ("keyUsage", "critical,digitalSignature"),
                ("extendedKeyUsage", "clientAuth"),
            ]
        }
        shape.extensions += extraExtensions
        return try issueShape(shape, issuer: issuer, isRoot: issuer == nil && profile.isCA)
    }

    static func generateKey(_ type: KeyType) throws -> OwnedKey {
        let algorithm = [.rsa2048, .rsa1024, .rsa4096].contains(type) ? "RSA" : "EC"
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else { throw TestingError("key context") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw TestingError("keygen init") }
        switch type {
        case .ecdsaP256: EVP_PKEY_CTX_set_group_name(context, "P-256")
        case .ecdsaP224: EVP_PKEY_CTX_set_group_name(context, "P-224")
        case .ecdsaP384: EVP_PKEY_CTX_set_group_name(context, "P-384")
        case .rsa2048: EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048)
        case .rsa4096: EVP_PKEY_CTX_set_rsa_keygen_bits(context, 4096)
        case .rsa1024: EVP_PKEY_CTX_set_rsa_keygen_bits(context, 1024)
        }
        var key: OpaquePointer? = nil
        guard EVP_PKEY_generate(context, &key) == 1, let key else { throw TestingError("key generation") }
        return OwnedKey(takingOwnership: key)
    }
}

extension TestPKI.Profile {
    var isCA: Bool {
        switch self {
        case .rootCA, .intermediateCA: return true
        default: return false
        }
    }
}
