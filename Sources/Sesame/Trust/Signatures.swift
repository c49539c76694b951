internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Glibc

/// A signature scheme: what request-signing code asks of an identity's key (Apple's
/// `SecKeyAlgorithm` signature values map onto these).
public struct SignatureScheme: Hashable, Sendable, CustomStringConvertible {
    /// The key's algorithm and padding.
    public enum Padding: Hashable, Sendable {
        /// RSASSA-PKCS1-v1_5 (RFC 8017 §8.2).
        case rsaPKCS1v15
        /// RSASSA-PSS with MGF1 over the same hash and a salt as long as the hash (RFC 8017 §8.1),
        /// as Apple's `rsaSignature…PSS…` algorithms.
        case rsaPSS
        /// ECDSA with a DER `Ecdsa-Sig-Value` (ANSI X9.62).
        case ecdsaX962
        /// Ed25519 (RFC 8032), over the whole message.
        case ed25519
    }

    /// A hash function.
    public enum Hash: String, Hashable, Sendable {
        /// SHA-1, for verifying old signatures only.
        case sha1 = "SHA-1"
        /// SHA-224.
        case sha224 = "SHA-224"
        /// SHA-256.
        case sha256 = "SHA-256"
        /// SHA-384.
        case sha384 = "SHA-384"
        /// SHA-512.
        case sha512 = "SHA-512"
    }

    /// The padding (RSA) or encoding of the signature.
    public var padding: Padding
    /// The hash (ignored for Ed25519).
    public var hash: Hash
    /// True when the input is already the hash of the message (Apple's `…Digest…` algorithms),
    /// false when it is the message.
    public var inputIsDigest: Bool

    /// A scheme with `padding` and `hash`; with `inputIsDigest`, the input is already the digest.
    public init(padding: Padding, hash: Hash, inputIsDigest: Bool = false) {
        self.padding = padding
        self.hash = hash
        self.inputIsDigest = inputIsDigest
    }

    public var description: String {
        padding == .ed25519 ? "Ed25519" : "\(padding) \(hash.rawValue)\(inputIsDigest ? " (digest)" : "")"
    }

    var digest: OpaquePointer? {
        switch hash {
        case .sha1: return EVP_sha1()
        case .sha224: return EVP_sha224()
        case .sha256: return EVP_sha256()
        case .sha384: return EVP_sha384()
        case .sha512: return EVP_sha512()
        }
    }

    /// Whether the scheme fits a key of `kind`.
    public func fits(_ kind: PublicKey.Kind) -> Bool {
        switch padding {
        case .rsaPKCS1v15, .rsaPSS: return kind == .rsa
        case .ecdsaX962: return kind == .ellipticCurve
        case .ed25519: return kind == .ed25519 && !inputIsDigest
        }
    }

    /// Sets the scheme on a signing or verifying context made for a key.
    fileprivate func configure(_ context: OpaquePointer) -> Bool {
        guard padding != .ed25519 else { return true }
        if inputIsDigest, EVP_PKEY_CTX_set_signature_md(context, digest) != 1 { return false }
        switch padding {
        case .rsaPKCS1v15: return EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PADDING) == 1
        case .rsaPSS:
            return EVP_PKEY_CTX_set_rsa_padding(context, RSA_PKCS1_PSS_PADDING) == 1
                && EVP_PKEY_CTX_set_rsa_pss_saltlen(context, RSA_PSS_SALTLEN_DIGEST) == 1
        case .ecdsaX962, .ed25519: return true
        }
    }
}

extension Identity {
    /// Signs `input` (the message, or its hash for a digest scheme) with the identity's private key.
    /// - Throws: ``SesameError/Code/invalidArgument`` when the scheme does not fit the key, or
    ///   a digest input has the wrong length; ``SesameError/Code/invalidPrivateKey`` when
    ///   OpenSSL refuses.
    public func sign(_ input: Data, using scheme: SignatureScheme) throws -> Data {
        let key = privateKey.pointer
        guard scheme.fits(certificate.publicKey.kind) else {
            throw SesameError(.invalidArgument, "\(scheme) does not fit a \(certificate.publicKey.algorithm) key")
        }
        let bytes = [UInt8](input)
        if scheme.inputIsDigest {
            guard bytes.count == Int(EVP_MD_get_size(scheme.digest)) else {
                throw SesameError(
                    .invalidArgument,
                    "a \(scheme.hash.rawValue) digest is \(EVP_MD_get_size(scheme.digest)) bytes, not \(bytes.count)"
                )
            }
            guard let context = EVP_PKEY_CTX_new(key, nil) else {
                throw SesameError(.invalidPrivateKey, "out of memory")
            }
            defer { EVP_PKEY_CTX_free(context) }
            guard EVP_PKEY_sign_init(context) == 1, scheme.configure(context) else {
                throw SesameError(
                    .invalidPrivateKey,
                    "the key cannot sign with \(scheme) (\(OpenSSLErrorStack.drain()))"
                )
            }
            return try Self.signature { EVP_PKEY_sign(context, $0, &$1, bytes, bytes.count) }
        }
        guard let context = EVP_MD_CTX_new() else { throw SesameError(.invalidPrivateKey, "out of memory") }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer? = nil
        let digest = scheme.padding == .ed25519 ? nil : scheme.digest
        guard EVP_DigestSignInit(context, &keyContext, digest, nil, key) == 1, let keyContext,
            scheme.configure(keyContext)
        else {
            throw SesameError(.invalidPrivateKey, "the key cannot sign with \(scheme) (\(OpenSSLErrorStack.drain()))")
        }
        return try Self.signature { EVP_DigestSign(context, $0, &$1, bytes, bytes.count) }
    }

    /// OpenSSL's two-call signing: the length with no buffer, then the signature.
    private static func signature(
        _ sign: (UnsafeMutablePointer<UInt8>?, inout Int) -> Int32
    ) throws -> Data {
        var length = 0
        guard sign(nil, &length) == 1 else {
            throw SesameError(.invalidPrivateKey, "signing failed (\(OpenSSLErrorStack.drain()))")
        }
        var signature = [UInt8](repeating: 0, count: length)
        guard signature.withUnsafeMutableBufferPointer({ sign($0.baseAddress, &length) }) == 1 else {
            throw SesameError(.invalidPrivateKey, "signing failed (\(OpenSSLErrorStack.drain()))")
        }
        return Data(signature.prefix(length))
    }

    /// The private key in Apple's external representation: for RSA the DER PKCS#1
    /// RSAPrivateKey, for EC the public point followed by the private scalar (`04‖X‖Y‖K`).
    /// Empty for other algorithms.
    public var privateKeyRawRepresentation: Data {
        let key = privateKey.pointer
        switch certificate.publicKey.kind {
        case .rsa:
            var out: UnsafeMutablePointer<UInt8>? = nil
            let length = i2d_PrivateKey(key, &out)
            guard length > 0, let out else { return Data() }
            defer { CSesameShims_OPENSSL_free(out) }
            return Data(bytes: out, count: Int(length))
        case .ellipticCurve:
            let point = certificate.publicKey.rawRepresentation
            var scalar: OpaquePointer? = nil
            guard EVP_PKEY_get_bn_param(key, "priv", &scalar) == 1, let scalar else { return Data() }
            defer { BN_clear_free(scalar) }
            let size = (Int(EVP_PKEY_get_bits(key)) + 7) / 8
            var bytes = [UInt8](repeating: 0, count: size)
            guard BN_bn2binpad(scalar, &bytes, Int32(size)) == Int32(size) else { return Data() }
            return point + Data(bytes)
        case .ed25519, .other:
            return Data()
        }
    }
}

extension PublicKey {
    /// Whether `signature` is this key's over `input` (the message, or its hash for a digest
    /// scheme) under `scheme`.
    public func verify(_ signature: Data, of input: Data, using scheme: SignatureScheme) -> Bool {
        guard scheme.fits(kind), let key = Self.parse(spkiDER) else { return false }
        defer { EVP_PKEY_free(key) }
        let bytes = [UInt8](input)
        let signed = [UInt8](signature)
        defer { _ = OpenSSLErrorStack.drain() }
        if scheme.inputIsDigest {
            guard bytes.count == Int(EVP_MD_get_size(scheme.digest)), let context = EVP_PKEY_CTX_new(key, nil) else {
                return false
            }
            defer { EVP_PKEY_CTX_free(context) }
            guard EVP_PKEY_verify_init(context) == 1, scheme.configure(context) else { return false }
            return EVP_PKEY_verify(context, signed, signed.count, bytes, bytes.count) == 1
        }
        guard let context = EVP_MD_CTX_new() else { return false }
        defer { EVP_MD_CTX_free(context) }
        var keyContext: OpaquePointer? = nil
        let digest = scheme.padding == .ed25519 ? nil : scheme.digest
        guard EVP_DigestVerifyInit(context, &keyContext, digest, nil, key) == 1, let keyContext,
            scheme.configure(keyContext)
        else { return false }
        return EVP_DigestVerify(context, signed, signed.count, bytes, bytes.count) == 1
    }
}
