internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Glibc

/// A client identity: a certificate, the private key that belongs to it, and the intermediate
/// certificates to send with it (the `SecIdentity` analogue).
///
/// Load one from a PKCS#12 file (OpenSSL 3 defaults and legacy 3DES/RC2 files alike) or from a PEM
/// certificate and a PEM private key (encrypted or not). Every loader checks that the key belongs to
/// the certificate.
public struct Identity: Hashable, Sendable, CustomStringConvertible {
    /// The leaf certificate.
    public let certificate: Certificate
    /// Intermediate certificates sent after the leaf, in order.
    public let intermediates: [Certificate]
    let privateKey: PrivateKeyBox

    init(certificate: Certificate, intermediates: [Certificate], privateKey: PrivateKeyBox, source: String) throws {
        OpenSSLErrorStack.clear()
        guard X509_check_private_key(certificate.box.pointer, privateKey.pointer) == 1 else {
            _ = OpenSSLErrorStack.drain()
            throw SesameError(
                .keyMismatch,
                "\(source): the private key does not belong to the certificate \(certificate.subject)"
            )
        }
        self.certificate = certificate
        self.intermediates = intermediates
        self.privateKey = privateKey
    }

    /// The leaf followed by the intermediates.
    public var certificateChain: [Certificate] { [certificate] + intermediates }

    public var description: String { "Identity(\(certificate.subject), \(intermediates.count) intermediates)" }

    public static func == (lhs: Identity, rhs: Identity) -> Bool {
        lhs.certificate == rhs.certificate && lhs.intermediates == rhs.intermediates
    }
    public func hash(into hasher: inout Hasher) { hasher.combine(certificate) }
}

// MARK: - PKCS#12

extension Identity {
    /// Loads an identity from a PKCS#12 (`.p12` / `.pfx`) file.
    /// - Parameters:
    ///   - path: the file.
    ///   - password: the file's password (empty for none).
    /// - Throws: ``SesameError/Code/fileUnreadable``, ``SesameError/Code/invalidPKCS12`` (truncated or
    ///   not PKCS#12), ``SesameError/Code/wrongPassword``, ``SesameError/Code/keyMismatch``; the error
    ///   names the file.
    public static func load(pkcs12File path: String, password: String) throws -> Identity {
        try Identity(pkcs12: Data(UserFile.read(path, as: .pkcs12)), password: password, source: "'\(path)'")
    }

    /// Reads an identity from PKCS#12 bytes.
    public init(pkcs12 data: Data, password: String) throws {
        try self.init(pkcs12: data, password: password, source: "PKCS#12 data")
    }

    init(pkcs12 data: Data, password: String, source: String) throws {
        let bytes = [UInt8](data)
        guard !bytes.isEmpty else { throw SesameError(.invalidPKCS12, "\(source): the file is empty") }
        if looksLikePEM(bytes) {
            throw SesameError(.invalidPKCS12, "\(source): this is a PEM file, not PKCS#12 (use the PEM loader)")
        }
        OpenSSLErrorStack.clear()
        let parsed: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_PKCS12(nil, &cursor, buffer.count)
        }
        guard let p12 = parsed else {
            throw SesameError(
                .invalidPKCS12,
                "\(source): not a PKCS#12 file, or truncated (\(OpenSSLErrorStack.drain()))"
            )
        }
        defer { PKCS12_free(p12) }
        try Self.checkKeyDerivationCost(p12, password: password, source: source)

        if PKCS12_mac_present(p12) == 1 {
            OpenSSLErrorStack.clear()
            if PKCS12_verify_mac(p12, password, Int32(password.utf8.count)) != 1 {
                let stack = OpenSSLErrorStack.drain()
                if stack.reasons.contains(where: { $0.contains("unsupported") || $0.contains("fetch failed") }) {
                    throw SesameError(.unsupportedAlgorithm, "\(source): the MAC algorithm is not available (\(stack))")
                }
                throw SesameError(.wrongPassword, "\(source): wrong password (the MAC did not verify)")
            }
        }

        var parsedKey: OpaquePointer? = nil
        var parsedCert: OpaquePointer? = nil
        var parsedChain: OpaquePointer? = nil
        func parse() -> Bool {
            OpenSSLErrorStack.clear()
            return PKCS12_parse(p12, password, &parsedKey, &parsedCert, &parsedChain) == 1
        }
        var ok = parse()
        if !ok {
            // Old files (RC2-40 for certificates) need OpenSSL 3's legacy provider; load it once and retry.
            let first = OpenSSLErrorStack.drain()
            if CSesameShims_load_legacy_provider() == 1 {
                ok = parse()
            }
            if !ok {
                let second = OpenSSLErrorStack.drain()
                let reasons = second.entries.isEmpty ? first : second
                throw SesameError(.invalidPKCS12, "\(source): cannot decrypt the contents (\(reasons))")
            }
        }
        let chain = Self.takeStack(parsedChain)
        guard let cert = parsedCert else {
            if let parsedKey { EVP_PKEY_free(parsedKey) }
            throw SesameError(.invalidPKCS12, "\(source): holds no certificate")
        }
        let certificate = Certificate(box: X509Box(takingOwnership: cert))
        guard let key = parsedKey else {
            throw SesameError(.invalidPKCS12, "\(source): holds no private key for \(certificate.subject)")
        }
        try self.init(
            certificate: certificate,
            intermediates: chain,
            privateKey: PrivateKeyBox(takingOwnership: key),
            source: source
        )
    }

    /// The most iterations one key derivation of a PKCS#12 file may ask for. OpenSSL writes
    /// 2,048, Windows 2,000, Java's keytool 10,000; OWASP's 2023 advice for PBKDF2-HMAC-SHA256 is
    /// 600,000. A million costs about a second here, so a file cannot hold a loader (and the task
    /// waiting for it) for minutes: a MAC asking for 2^31-1 iterations would take about 40 minutes.
    public static let maximumPKCS12Iterations = 1_000_000
    /// The most iterations of all a PKCS#12 file's key derivations together (its MAC, its
    /// encrypted parts, its keys): three at the bound, as `openssl pkcs12 -iter N` writes a MAC,
    /// the certificates and the key with the same count.
    public static let maximumPKCS12TotalIterations = 3_000_000

    /// Refuses a PKCS#12 file whose key derivations would cost more than the bounds above, before
    /// any of them is computed.
    private static func checkKeyDerivationCost(_ p12: OpaquePointer, password: String, source: String) throws {
        var largest = 0
        var total = 0
        OpenSSLErrorStack.clear()
        let result = CSesameShims_PKCS12_iterations(
            p12,
            password,
            Int32(password.utf8.count),
            maximumPKCS12Iterations,
            &largest,
            &total
        )
        _ = OpenSSLErrorStack.drain()
        if result == 0 {
            throw SesameError(
                .invalidPKCS12,
                "\(source): a key derivation asks for \(largest) iterations; Sesame computes at most \(maximumPKCS12Iterations) (OpenSSL writes 2,048)"
            )
        }
        if total > maximumPKCS12TotalIterations {
            throw SesameError(
                .invalidPKCS12,
                "\(source): its key derivations ask for \(total) iterations together; Sesame computes at most \(maximumPKCS12TotalIterations)"
            )
        }
    }

    /// Takes ownership of a `STACK_OF(X509)` and its certificates.
    static func takeStack(_ stack: OpaquePointer?) -> [Certificate] {
        guard let stack else { return [] }
        var result: [Certificate] = []
        for index in 0..<CSesameShims_sk_X509_num(stack) {
            if let x509 = CSesameShims_sk_X509_value(stack, index) {
                result.append(Certificate(box: X509Box(borrowing: x509)))
            }
        }
        CSesameShims_sk_X509_pop_free(stack)
        return result
    }
}

// MARK: - PEM

extension Identity {
    /// Loads an identity from a PEM certificate file (leaf first, then intermediates) and a PEM
    /// private-key file, which may be the same file.
    /// - Parameters:
    ///   - certificateFile: PEM with the leaf certificate first.
    ///   - keyFile: PEM private key (PKCS#8, traditional RSA/EC, encrypted or not).
    ///   - password: the key's password when it is encrypted.
    /// - Throws: ``SesameError/Code/wrongPassword`` (also when an encrypted key gets no password),
    ///   ``SesameError/Code/invalidPrivateKey``, ``SesameError/Code/invalidCertificate``,
    ///   ``SesameError/Code/keyMismatch``; each names the file.
    public static func load(certificateFile: String, keyFile: String, password: String? = nil) throws -> Identity {
        let certificates = try Certificate.certificates(
            fileBytes: try UserFile.read(certificateFile, as: .certificates),
            source: "'\(certificateFile)'"
        )
        let key = try PrivateKeyLoader.load(
            pem: try UserFile.read(keyFile, as: .privateKey),
            password: password,
            source: "'\(keyFile)'"
        )
        return try Identity(
            certificate: certificates[0],
            intermediates: Array(certificates.dropFirst()),
            privateKey: key,
            source: "'\(keyFile)'"
        )
    }

    /// Builds an identity from PEM texts.
    public init(certificatePEM: String, privateKeyPEM: String, password: String? = nil) throws {
        let certificates = try Certificate.certificates(pemEncoded: certificatePEM)
        let key = try PrivateKeyLoader.load(pem: Array(privateKeyPEM.utf8), password: password, source: "PEM key")
        try self.init(
            certificate: certificates[0],
            intermediates: Array(certificates.dropFirst()),
            privateKey: key,
            source: "PEM key"
        )
    }
}

extension Identity {
    /// The private key as an unencrypted PKCS#8 PEM block, for stores that keep the identity
    /// (SesameNetworking's keychain items, which its file or keyring protects); empty when
    /// OpenSSL cannot write it.
    package var unencryptedPrivateKeyPEM: String {
        guard let bio = MemoryBIO(),
            PEM_write_bio_PrivateKey(bio.pointer, privateKey.pointer, nil, nil, 0, nil, nil) == 1
        else {
            _ = OpenSSLErrorStack.drain()
            return ""
        }
        return String(decoding: bio.contents, as: UTF8.self)
    }
}

/// Reads PEM private keys without ever prompting on a terminal.
enum PrivateKeyLoader {
    static func load(pem bytes: [UInt8], password: String?, source: String) throws -> PrivateKeyBox {
        let labels = pemBlockLabels(bytes)
        guard labels.contains(where: { $0.hasSuffix("PRIVATE KEY") }) else {
            throw SesameError(.invalidPrivateKey, "\(source): no PRIVATE KEY block found")
        }
        let encrypted =
            labels.contains("ENCRYPTED PRIVATE KEY")
            || String(decoding: bytes, as: UTF8.self).contains("Proc-Type: 4,ENCRYPTED")
        if encrypted && password == nil {
            throw SesameError(.wrongPassword, "\(source): the private key is encrypted and no password was given")
        }
        guard let bio = MemoryBIO(bytes) else { throw SesameError(.invalidPrivateKey, "\(source): out of memory") }
        OpenSSLErrorStack.clear()
        // A callback that never prompts: without it OpenSSL reads a password from the terminal.
        let key: OpaquePointer? = (password ?? "").withCString { passphrase in
            PEM_read_bio_PrivateKey(
                bio.pointer,
                nil,
                { buffer, size, _, userData in
                    guard let buffer, let userData else { return -1 }
                    let source = userData.assumingMemoryBound(to: CChar.self)
                    let length = Int32(strlen(source))
                    guard length <= size else { return -1 }
                    memcpy(buffer, source, Int(length))
                    return length
                },
                UnsafeMutableRawPointer(mutating: passphrase)
            )
        }
        guard let key else {
            let stack = OpenSSLErrorStack.drain()
            if encrypted {
                throw SesameError(.wrongPassword, "\(source): wrong password for the encrypted private key")
            }
            throw SesameError(.invalidPrivateKey, "\(source): the private key is damaged or truncated (\(stack))")
        }
        return PrivateKeyBox(takingOwnership: key)
    }
}
