internal import COpenSSL
internal import CSesameShims
import Foundation
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
    ///   - commonName: the subject CN.
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
        try Self.issue(
            subject: "CN=\(commonName),O=Sesame Test",
            key: key,
            issuer: intermediate,
            profile: .serverLeaf(dnsNames: dnsNames, ipAddresses: ipAddresses),
            notBefore: validFrom ?? now - 86_400,
            notAfter: validUntil ?? now + 398 * 86_400,
            extraExtensions: mustStaple ? [(NID_tlsfeature, "status_request")] : []
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
        case ecdsaP256
        case rsa2048
        /// Weak keys the web PKI refuses, for tests of that rule.
        case ecdsaP224
        case rsa1024
    }

    enum Profile {
        case rootCA
        case intermediateCA
        case serverLeaf(dnsNames: [String], ipAddresses: [String])
        case clientLeaf
        case ocspResponder
    }

    static func issue(
        subject: String,
        key keyType: KeyType,
        issuer: TestIssuedCertificate?,
        profile: Profile,
        notBefore: Date,
        notAfter: Date,
        extraExtensions: [(Int32, String)] = []
    ) throws -> TestIssuedCertificate {
        let key = try generateKey(keyType)
        guard let x509 = X509_new() else { throw TestingError("X509_new") }
        let owned = OwnedX509(takingOwnership: x509)
        X509_set_version(x509, 2)
        var serial = [UInt8](repeating: 0, count: 16)
        RAND_bytes(&serial, Int32(serial.count))
        serial[0] &= 0x7F
        if let bn = BN_bin2bn(serial, Int32(serial.count), nil) {
            BN_to_ASN1_INTEGER(bn, X509_get_serialNumber(x509))
            BN_free(bn)
        }
        ASN1_TIME_set(X509_getm_notBefore(x509), time_t(notBefore.timeIntervalSince1970))
        ASN1_TIME_set(X509_getm_notAfter(x509), time_t(notAfter.timeIntervalSince1970))
        X509_set_pubkey(x509, key.pointer)
        guard let name = X509_NAME_new() else { throw TestingError("X509_NAME_new") }
        defer { X509_NAME_free(name) }
        // The subject is written as RFC 2253 prints it (most specific first); DER order is the reverse.
        for component in subject.split(separator: ",").reversed() {
            let parts = component.split(separator: "=", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            guard X509_NAME_add_entry_by_txt(name, parts[0], MBSTRING_UTF8, parts[1], -1, -1, 0) == 1 else {
                throw TestingError("subject component \(component)")
            }
        }
        X509_set_subject_name(x509, name)
        X509_set_issuer_name(x509, issuer.map { X509_get_subject_name($0.x509.pointer) } ?? name)

        var extensions: [(Int32, String)] = []
        switch profile {
        case .rootCA:
            extensions = [
                (NID_basic_constraints, "critical,CA:TRUE"), (NID_key_usage, "critical,keyCertSign,cRLSign"),
            ]
        case .intermediateCA:
            extensions = [
                (NID_basic_constraints, "critical,CA:TRUE,pathlen:0"), (NID_key_usage, "critical,keyCertSign,cRLSign"),
            ]
        case .serverLeaf(let dnsNames, let ipAddresses):
            extensions = [
                (NID_basic_constraints, "critical,CA:FALSE"),
                (NID_key_usage, "critical,digitalSignature,keyEncipherment"),
                (NID_ext_key_usage, "serverAuth"),
            ]
            let sans = dnsNames.map { "DNS:\($0)" } + ipAddresses.map { "IP:\($0)" }
            if !sans.isEmpty { extensions.append((NID_subject_alt_name, sans.joined(separator: ","))) }
        case .ocspResponder:
            extensions = [
                (NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature"),
                (NID_ext_key_usage, "OCSPSigning"),
            ]
        case .clientLeaf:
            extensions = [
                (NID_basic_constraints, "critical,CA:FALSE"), (NID_key_usage, "critical,digitalSignature"),
                (NID_ext_key_usage, "clientAuth"),
            ]
        }
        extensions += extraExtensions
        extensions.append((NID_subject_key_identifier, "hash"))
        extensions.append((NID_authority_key_identifier, "keyid:always"))

        let context = CSesameShims_X509V3_CTX_new()
        defer { CSesameShims_X509V3_CTX_free(context) }
        CSesameShims_X509V3_set_ctx(context, issuer?.x509.pointer ?? x509, x509)
        for (nid, value) in extensions {
            guard let ext = X509V3_EXT_conf_nid(nil, context, nid, value) else {
                throw TestingError("extension \(value)")
            }
            X509_add_ext(x509, ext, -1)
            X509_EXTENSION_free(ext)
        }
        let signer = issuer?.key ?? key
        guard X509_sign(x509, signer.pointer, EVP_sha256()) > 0 else { throw TestingError("X509_sign") }

        // The intermediates a server sends with this certificate: every issuer above it but the root.
        let intermediates = issuer.map { ([$0] + $0.issuerChain).filter { !$0.isRoot } } ?? []
        return try TestIssuedCertificate(
            x509: owned,
            key: key,
            issuer: issuer,
            issuerChain: intermediates,
            isRoot: issuer == nil && profile.isCA
        )
    }

    static func generateKey(_ type: KeyType) throws -> OwnedKey {
        let algorithm = type == .rsa2048 || type == .rsa1024 ? "RSA" : "EC"
        guard let context = EVP_PKEY_CTX_new_from_name(nil, algorithm, nil) else { throw TestingError("key context") }
        defer { EVP_PKEY_CTX_free(context) }
        guard EVP_PKEY_keygen_init(context) == 1 else { throw TestingError("keygen init") }
        switch type {
        case .ecdsaP256: EVP_PKEY_CTX_set_group_name(context, "P-256")
        case .ecdsaP224: EVP_PKEY_CTX_set_group_name(context, "P-224")
        case .rsa2048: EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048)
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
