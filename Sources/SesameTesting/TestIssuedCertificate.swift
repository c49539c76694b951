internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Glibc
import Sesame

/// A certificate made by ``TestPKI`` together with its private key and the intermediates above it.
public final class TestIssuedCertificate: Sendable {
    let x509: OwnedX509
    let key: OwnedKey
    let issuerChain: [TestIssuedCertificate]
    /// The certificate that signed this one (nil for a self-signed one).
    let issuer: TestIssuedCertificate?
    let isRoot: Bool

    /// The certificate.
    public let certificate: Certificate
    /// The intermediate CAs between this certificate and its root (not the root), nearest first.
    public var intermediates: [Certificate] { issuerChain.map(\.certificate) }
    /// The certificate followed by its intermediates: what a server sends.
    public var chain: [Certificate] { [certificate] + intermediates }
    /// The private key as unencrypted PKCS#8 PEM.
    public var privateKeyPEM: String { key.pem }
    /// The certificate as PEM.
    public var certificatePEM: String { certificate.pemEncoded }
    /// The chain (leaf first) as concatenated PEM.
    public var chainPEM: String { chain.map(\.pemEncoded).joined() }

    init(
        x509: OwnedX509,
        key: OwnedKey,
        issuer: TestIssuedCertificate?,
        issuerChain: [TestIssuedCertificate],
        isRoot: Bool
    ) throws {
        self.issuer = issuer
        self.x509 = x509
        self.key = key
        self.issuerChain = issuerChain
        self.isRoot = isRoot
        self.certificate = try Certificate(derEncoded: x509.der)
    }

    /// The private key as PKCS#8 PEM encrypted with AES-256-CBC.
    public func encryptedPrivateKeyPEM(password: String) -> String { key.encryptedPEM(password: password) }

    /// The certificate, its intermediates and its key as a Sesame `Identity`.
    public func identity() throws -> Identity {
        try Identity(certificatePEM: chainPEM, privateKeyPEM: privateKeyPEM)
    }

    /// PKCS#12 encoding of key, certificate and intermediates.
    /// - Parameters:
    ///   - password: the file's password.
    ///   - legacy: `true` for the pre-OpenSSL-3 format (PBE-SHA1-3DES for key and certificates,
    ///     SHA-1 MAC); `false` for OpenSSL 3's default (PBES2/AES-256-CBC, SHA-256 MAC).
    ///   - friendlyName: the name the file gives the key and certificate (`kSecImportItemLabel`).
    ///   - iterations: the key derivations' iteration count (OpenSSL's default, 2,048, when nil),
    ///     for the MAC, the certificates and the key alike, as `openssl pkcs12 -iter` writes it.
    ///   - claimedMACIterations: writes this iteration count into the MAC without computing it
    ///     (the MAC then does not verify): a hostile file that asks a loader for work.
    public func pkcs12(
        password: String,
        legacy: Bool = false,
        friendlyName: String = "sesame",
        iterations: Int? = nil,
        claimedMACIterations: Int? = nil
    ) throws -> Data {
        guard let stack = CSesameShims_sk_X509_new_null() else { throw TestingError("stack") }
        defer { CSesameShims_sk_X509_free(stack) }
        for intermediate in issuerChain { CSesameShims_sk_X509_push(stack, intermediate.x509.pointer) }
        let tripleDES = NID_pbe_WithSHA1And3_Key_TripleDES_CBC
        guard
            let p12 = PKCS12_create(
                password,
                friendlyName,
                key.pointer,
                x509.pointer,
                stack,
                legacy ? tripleDES : 0,
                legacy ? tripleDES : 0,
                Int32(iterations ?? (legacy ? 2048 : 0)),
                Int32(iterations ?? (legacy ? 1 : 0)),
                0
            )
        else { throw TestingError("PKCS12_create") }
        defer { PKCS12_free(p12) }
        if legacy {
            // PKCS12_create's MAC follows the defaults; redo it with SHA-1 as legacy tools did.
            PKCS12_set_mac(p12, password, -1, nil, 0, 2048, EVP_sha1())
        }
        if let claimedMACIterations {
            var iterations: UnsafePointer<ASN1_INTEGER>? = nil
            PKCS12_get0_mac(nil, nil, nil, &iterations, p12)
            guard let iterations,
                ASN1_INTEGER_set(UnsafeMutablePointer(mutating: iterations), claimedMACIterations) == 1
            else {
                throw TestingError("the MAC's iteration count")
            }
        }
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_PKCS12(p12, &out)
        guard length > 0, let out else { throw TestingError("i2d_PKCS12") }
        defer { CSesameShims_OPENSSL_free(out) }
        return Data(bytes: out, count: Int(length))
    }

    /// Writes the chain PEM and the key PEM into `directory` as `NAME.pem` and `NAME.key`, and
    /// returns their paths.
    @discardableResult
    public func write(to directory: URL, name: String) throws -> (certificate: String, key: String) {
        let certificatePath = directory.appendingPathComponent("\(name).pem").path
        let keyPath = directory.appendingPathComponent("\(name).key").path
        try Data(chainPEM.utf8).write(to: URL(fileURLWithPath: certificatePath))
        try Data(privateKeyPEM.utf8).write(to: URL(fileURLWithPath: keyPath))
        chmod(keyPath, 0o600)
        return (certificatePath, keyPath)
    }
}
