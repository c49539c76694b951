internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Glibc

/// A public key's algorithm, and its bytes without the SubjectPublicKeyInfo wrapping: the form
/// Apple's `SecKeyCopyExternalRepresentation` gives and `SecKeyCreateWithData` takes.
extension PublicKey {
    /// A public key's algorithm.
    public enum Kind: String, Hashable, Sendable {
        /// RSA.
        case rsa = "RSA"
        /// Elliptic curve (P-256, P-384, P-521).
        case ellipticCurve = "EC"
        /// Ed25519.
        case ed25519 = "Ed25519"
        /// Another algorithm, kept by its bytes for pinning and comparison.
        case other = "other"
    }

    /// Parses a DER SubjectPublicKeyInfo (RFC 5280 §4.1.2.7).
    /// - Throws: ``SesameError/Code/invalidCertificate`` when the bytes are not one.
    public init(subjectPublicKeyInfo der: Data) throws {
        guard let key = Self.parse(der) else {
            throw SesameError(.invalidCertificate, "not a DER SubjectPublicKeyInfo")
        }
        defer { EVP_PKEY_free(key) }
        self.init(spkiDER: der, description: Self.description(of: key))
    }

    /// A key from its raw form (``rawRepresentation``): for RSA the DER PKCS#1 RSAPublicKey, for
    /// EC the uncompressed point `04‖X‖Y` of P-256, P-384 or P-521 (the length names the curve),
    /// for Ed25519 the 32 key bytes.
    /// - Throws: ``SesameError/Code/invalidCertificate`` when the bytes are not such a key.
    public init(rawRepresentation raw: Data, kind: Kind) throws {
        let spki: Data
        switch kind {
        case .rsa:
            // SubjectPublicKeyInfo { AlgorithmIdentifier { rsaEncryption, NULL }, BIT STRING { PKCS#1 } }
            let algorithm: [UInt8] = [
                0x30, 0x0D, 0x06, 0x09, 0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x01, 0x05, 0x00,
            ]
            spki = Data(Self.der(0x30, algorithm + Self.der(0x03, [0x00] + [UInt8](raw))))
        case .ellipticCurve:
            guard let prefix = Self.ecPrefixes[raw.count], raw.first == 0x04 else {
                throw SesameError(
                    .invalidCertificate,
                    "an EC public key is an uncompressed point of 65, 97 or 133 bytes (P-256, P-384, P-521), not \(raw.count) bytes"
                )
            }
            spki = Data(prefix) + raw
        case .ed25519:
            guard raw.count == 32 else {
                throw SesameError(.invalidCertificate, "an Ed25519 public key is 32 bytes, not \(raw.count)")
            }
            spki = Data([0x30, 0x2A, 0x30, 0x05, 0x06, 0x03, 0x2B, 0x65, 0x70, 0x03, 0x21, 0x00]) + raw
        case .other:
            throw SesameError(.invalidCertificate, "only RSA, EC and Ed25519 keys have a raw form")
        }
        guard let key = Self.parse(spki), Self.kind(of: key) == kind else {
            throw SesameError(.invalidCertificate, "the bytes are not a valid \(kind.rawValue) public key")
        }
        defer { EVP_PKEY_free(key) }
        // The canonical encoding, as OpenSSL writes it back.
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_PUBKEY(key, &out)
        guard length > 0, let out else { throw SesameError(.invalidCertificate, "the key cannot be encoded") }
        defer { CSesameShims_OPENSSL_free(out) }
        self.init(spkiDER: Data(bytes: out, count: Int(length)), description: Self.description(of: key))
    }

    /// The algorithm.
    public var kind: Kind {
        guard let key = Self.parse(spkiDER) else { return .other }
        defer { EVP_PKEY_free(key) }
        return Self.kind(of: key)
    }

    /// The key size in bits: the modulus for RSA, the field for EC, 256 for Ed25519.
    public var bitCount: Int {
        guard let key = Self.parse(spkiDER) else { return 0 }
        defer { EVP_PKEY_free(key) }
        return Int(EVP_PKEY_get_bits(key))
    }

    /// The key without its SubjectPublicKeyInfo wrapping, as Apple's
    /// `SecKeyCopyExternalRepresentation` gives a public key: the DER PKCS#1 RSAPublicKey for RSA
    /// (`openssl rsa -pubin -RSAPublicKey_out -outform DER`), the uncompressed ANSI X9.63 point
    /// `04‖X‖Y` for EC, the 32 key bytes for Ed25519. Empty for other algorithms.
    public var rawRepresentation: Data {
        guard let key = Self.parse(spkiDER) else { return Data() }
        defer { EVP_PKEY_free(key) }
        switch Self.kind(of: key) {
        case .rsa, .ellipticCurve:
            var out: UnsafeMutablePointer<UInt8>? = nil
            let length = i2d_PublicKey(key, &out)
            guard length > 0, let out else { return Data() }
            defer { CSesameShims_OPENSSL_free(out) }
            return Data(bytes: out, count: Int(length))
        case .ed25519:
            var bytes = [UInt8](repeating: 0, count: 32)
            var length = bytes.count
            guard EVP_PKEY_get_raw_public_key(key, &bytes, &length) == 1 else { return Data() }
            return Data(bytes.prefix(length))
        case .other:
            return Data()
        }
    }

    /// The SHA-1 of the key's bits (``rawRepresentation``): RFC 5280 §4.2.1.2's first method of
    /// making a key identifier, and what Apple's `kSecImportItemKeyID` holds.
    public var keyIdentifier: Data {
        let raw = [UInt8](rawRepresentation)
        var digest = [UInt8](repeating: 0, count: 20)
        var length: UInt32 = 0
        guard EVP_Digest(raw, raw.count, &digest, &length, EVP_sha1(), nil) == 1 else { return Data() }
        return Data(digest.prefix(Int(length)))
    }

    /// "RSA 2048", "EC P-256", "Ed25519": what ``algorithm`` says.
    static func description(of key: OpaquePointer) -> String {
        let bits = EVP_PKEY_get_bits(key)
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA: return "RSA \(bits)"
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            if EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 {
                let curve = String(decoding: name.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
                switch curve {
                case "prime256v1": return "EC P-256"
                case "secp384r1": return "EC P-384"
                case "secp521r1": return "EC P-521"
                default: return "EC \(curve)"
                }
            }
            return "EC \(bits)"
        case EVP_PKEY_ED25519: return "Ed25519"
        default: return "key \(bits) bits"
        }
    }

    private static func kind(of key: OpaquePointer) -> Kind {
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA: return .rsa
        case EVP_PKEY_EC: return .ellipticCurve
        case EVP_PKEY_ED25519: return .ed25519
        default: return .other
        }
    }

    /// An owned EVP_PKEY (free it) from SubjectPublicKeyInfo DER that holds nothing else.
    static func parse(_ der: Data) -> OpaquePointer? {
        der.withUnsafeBytes { raw -> OpaquePointer? in
            guard let base = raw.baseAddress, raw.count > 0 else { return nil }
            var cursor: UnsafePointer<UInt8>? = base.assumingMemoryBound(to: UInt8.self)
            let key = d2i_PUBKEY(nil, &cursor, raw.count)
            _ = OpenSSLErrorStack.drain()
            guard let key else { return nil }
            if let cursor, UnsafeRawPointer(cursor) - base != raw.count {
                EVP_PKEY_free(key)
                return nil
            }
            return key
        }
    }

    /// The SubjectPublicKeyInfo bytes before an uncompressed point, by the point's length.
    private static let ecPrefixes: [Int: [UInt8]] = [
        65: [  // id-ecPublicKey, prime256v1
            0x30, 0x59, 0x30, 0x13, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x08, 0x2A, 0x86, 0x48,
            0xCE, 0x3D, 0x03, 0x01, 0x07, 0x03, 0x42, 0x00,
        ],
        97: [  // id-ecPublicKey, secp384r1
            0x30, 0x76, 0x30, 0x10, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x05, 0x2B, 0x81, 0x04,
            0x00, 0x22, 0x03, 0x62, 0x00,
        ],
        133: [  // id-ecPublicKey, secp521r1
            0x30, 0x81, 0x9B, 0x30, 0x10, 0x06, 0x07, 0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01, 0x06, 0x05, 0x2B, 0x81,
            0x04, 0x00, 0x23, 0x03, 0x81, 0x86, 0x00,
        ],
    ]

    private static func der(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        var length: [UInt8] = []
        var count = content.count
        if count < 0x80 {
            length = [UInt8(count)]
        } else {
            while count > 0 {
                length.insert(UInt8(count & 0xFF), at: 0)
                count >>= 8
            }
            length.insert(0x80 | UInt8(length.count), at: 0)
        }
        return [tag] + length + content
    }
}
