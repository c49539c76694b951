import Foundation
import Sesame

// Security.framework's keys: `SecKey` over Sesame's public keys, in Apple's formats.

/// A key (`SecKey`): a public key, or the private key of an identity
/// (`SecIdentityCopyPrivateKey`), which signs but is never made from bytes here.
public final class SecKey: NSObject, @unchecked Sendable {
    // @unchecked: immutable.
    /// The public key (for a private key, the identity's public key).
    public let publicKey: PublicKey
    /// The identity whose private key this is; nil for a public key.
    public let privateKeyOwner: Identity?

    /// The public key `publicKey`.
    public init(_ publicKey: PublicKey) {
        self.publicKey = publicKey
        privateKeyOwner = nil
    }

    /// The private key of `identity`.
    public init(privateKeyOf identity: Identity) {
        publicKey = identity.certificate.publicKey
        privateKeyOwner = identity
    }

    var isPrivate: Bool { privateKeyOwner != nil }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? SecKey else { return false }
        return other.publicKey == publicKey && other.isPrivate == isPrivate
    }
    public override var hash: Int { publicKey.hashValue }
    public override var description: String { "<SecKey \(publicKey.algorithm) \(isPrivate ? "private" : "public")>" }
}

/// A key's algorithm (`kSecAttrKeyTypeRSA`, `kSecAttrKeyTypeECSECPrimeRandom`).
nonisolated(unsafe) public let kSecAttrKeyType: CFString = "type"
/// A key's size in bits.
nonisolated(unsafe) public let kSecAttrKeySizeInBits: CFString = "bsiz"
/// Whether a key is public, private or symmetric.
nonisolated(unsafe) public let kSecAttrKeyClass: CFString = "kcls"
/// RSA.
nonisolated(unsafe) public let kSecAttrKeyTypeRSA: CFString = "42"
/// Elliptic curve (the old name of `kSecAttrKeyTypeECSECPrimeRandom`, with the same value).
nonisolated(unsafe) public let kSecAttrKeyTypeEC: CFString = "73"
/// Elliptic curve over a prime field (P-256, P-384, P-521).
nonisolated(unsafe) public let kSecAttrKeyTypeECSECPrimeRandom: CFString = "73"
/// A public key.
nonisolated(unsafe) public let kSecAttrKeyClassPublic: CFString = "0"
/// A private key.
nonisolated(unsafe) public let kSecAttrKeyClassPrivate: CFString = "1"
/// A symmetric key.
nonisolated(unsafe) public let kSecAttrKeyClassSymmetric: CFString = "2"

/// The key's bytes as Apple gives them: for RSA the DER PKCS#1 RSAPublicKey (RSAPrivateKey for a
/// private key), for EC the uncompressed ANSI X9.63 point `04‖X‖Y` (followed by the scalar `K`
/// for a private key). The pinning idiom that hashes an ASN.1 header plus a public key's bytes
/// gets the same SHA-256 as `sesame trust` prints.
@discardableResult
public func SecKeyCopyExternalRepresentation(_ key: SecKey, _ error: UnsafeMutablePointer<CFError?>?) -> CFData? {
    let raw = key.privateKeyOwner?.privateKeyRawRepresentation ?? key.publicKey.rawRepresentation
    guard !raw.isEmpty else {
        error?.pointee = securityError(
            errSecUnimplemented,
            "\(key.publicKey.algorithm) keys have no external representation"
        )
        return nil
    }
    return raw as NSData
}

/// A public key from Apple's external representation, with `kSecAttrKeyType` (RSA or EC) and
/// `kSecAttrKeyClass` `kSecAttrKeyClassPublic` in `attributes`. Private keys cannot be made
/// this way here: the error says so.
@discardableResult
public func SecKeyCreateWithData(
    _ keyData: CFData,
    _ attributes: CFDictionary,
    _ error: UnsafeMutablePointer<CFError?>?
) -> SecKey? {
    let type =
        attributes[kSecAttrKeyType as String] as? String
        ?? (attributes[kSecAttrKeyType as String] as? NSString).map { $0 as String }
    let keyClass =
        attributes[kSecAttrKeyClass as String] as? String
        ?? (attributes[kSecAttrKeyClass as String] as? NSString).map { $0 as String }
    guard keyClass == nil || keyClass == kSecAttrKeyClassPublic as String else {
        error?.pointee = securityError(errSecUnimplemented, "only public keys can be created from data on Linux")
        return nil
    }
    guard let kind = PublicKey.Kind(secKeyType: type) else {
        error?.pointee = securityError(
            errSecParam,
            "kSecAttrKeyType must be kSecAttrKeyTypeRSA or kSecAttrKeyTypeECSECPrimeRandom"
        )
        return nil
    }
    do {
        return SecKey(try PublicKey(rawRepresentation: keyData as Data, kind: kind))
    } catch let failure {
        error?.pointee = securityError(errSecInvalidData, "\(failure)")
        return nil
    }
}

/// `kSecAttrKeyType`, `kSecAttrKeySizeInBits` and `kSecAttrKeyClass` of the key.
@discardableResult
public func SecKeyCopyAttributes(_ key: SecKey) -> CFDictionary? {
    let attributes: [String: Any] = [
        kSecAttrKeyType as String: PublicKey.Kind.secKeyType(of: key.publicKey),
        kSecAttrKeySizeInBits as String: NSNumber(value: key.publicKey.bitCount),
        kSecAttrKeyClass as String: key.isPrivate ? kSecAttrKeyClassPrivate : kSecAttrKeyClassPublic,
    ]
    return attributes as NSDictionary
}

extension PublicKey.Kind {
    /// The kind a `kSecAttrKeyType` value names; nil for anything but RSA and EC.
    init?(secKeyType type: String?) {
        if type == kSecAttrKeyTypeRSA as String {
            self = .rsa
        } else if type == kSecAttrKeyTypeECSECPrimeRandom as String {
            self = .ellipticCurve
        } else {
            return nil
        }
    }

    /// The `kSecAttrKeyType` of `key` (its algorithm's name for the kinds Apple has no constant for).
    static func secKeyType(of key: PublicKey) -> CFString {
        switch key.kind {
        case .rsa: kSecAttrKeyTypeRSA
        case .ellipticCurve: kSecAttrKeyTypeECSECPrimeRandom
        case .ed25519, .other: key.algorithm as NSString
        }
    }
}

/// The public key of `key` (itself for a public key).
@discardableResult
public func SecKeyCopyPublicKey(_ key: SecKey) -> SecKey? { key.isPrivate ? SecKey(key.publicKey) : key }

/// The private key of an identity.
@discardableResult
public func SecIdentityCopyPrivateKey(
    _ identity: SecIdentity,
    _ privateKeyRef: UnsafeMutablePointer<SecKey?>
) -> OSStatus {
    privateKeyRef.pointee = SecKey(privateKeyOf: identity.identity)
    return errSecSuccess
}

/// What a key is asked to do (`SecKeyOperationType`).
public enum SecKeyOperationType: Int, Sendable {
    /// Sign data or a digest.
    case sign = 0
    /// Verify a signature.
    case verify = 1
    /// Encrypt.
    case encrypt = 2
    /// Decrypt.
    case decrypt = 3
    /// Agree on a shared secret.
    case keyExchange = 4
}

/// A signature algorithm (`SecKeyAlgorithm`), with Apple's names and raw values.
public struct SecKeyAlgorithm: RawRepresentable, Hashable, @unchecked Sendable {
    // @unchecked: the raw value is an immutable string.
    public let rawValue: CFString
    public init(rawValue: CFString) { self.rawValue = rawValue }

    /// RSA PKCS #1 v1.5 signature of a message hashed with SHA-1.
    public static let rsaSignatureMessagePKCS1v15SHA1 = Self(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA1")
    /// RSA PKCS #1 v1.5 signature of a message hashed with SHA-224.
    public static let rsaSignatureMessagePKCS1v15SHA224 = Self(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA224")
    /// RSA PKCS #1 v1.5 signature of a message hashed with SHA-256.
    public static let rsaSignatureMessagePKCS1v15SHA256 = Self(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA256")
    /// RSA PKCS #1 v1.5 signature of a message hashed with SHA-384.
    public static let rsaSignatureMessagePKCS1v15SHA384 = Self(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA384")
    /// RSA PKCS #1 v1.5 signature of a message hashed with SHA-512.
    public static let rsaSignatureMessagePKCS1v15SHA512 = Self(rawValue: "algid:sign:RSA:message-PKCS1v15:SHA512")
    /// RSA PKCS #1 v1.5 signature of a SHA-1 digest.
    public static let rsaSignatureDigestPKCS1v15SHA1 = Self(rawValue: "algid:sign:RSA:digest-PKCS1v15:SHA1")
    /// RSA PKCS #1 v1.5 signature of a SHA-224 digest.
    public static let rsaSignatureDigestPKCS1v15SHA224 = Self(rawValue: "algid:sign:RSA:digest-PKCS1v15:SHA224")
    /// RSA PKCS #1 v1.5 signature of a SHA-256 digest.
    public static let rsaSignatureDigestPKCS1v15SHA256 = Self(rawValue: "algid:sign:RSA:digest-PKCS1v15:SHA256")
    /// RSA PKCS #1 v1.5 signature of a SHA-384 digest.
    public static let rsaSignatureDigestPKCS1v15SHA384 = Self(rawValue: "algid:sign:RSA:digest-PKCS1v15:SHA384")
    /// RSA PKCS #1 v1.5 signature of a SHA-512 digest.
    public static let rsaSignatureDigestPKCS1v15SHA512 = Self(rawValue: "algid:sign:RSA:digest-PKCS1v15:SHA512")
    /// RSA-PSS signature of a message hashed with SHA-1.
    public static let rsaSignatureMessagePSSSHA1 = Self(rawValue: "algid:sign:RSA:message-PSS:SHA1")
    /// RSA-PSS signature of a message hashed with SHA-224.
    public static let rsaSignatureMessagePSSSHA224 = Self(rawValue: "algid:sign:RSA:message-PSS:SHA224")
    /// RSA-PSS signature of a message hashed with SHA-256.
    public static let rsaSignatureMessagePSSSHA256 = Self(rawValue: "algid:sign:RSA:message-PSS:SHA256")
    /// RSA-PSS signature of a message hashed with SHA-384.
    public static let rsaSignatureMessagePSSSHA384 = Self(rawValue: "algid:sign:RSA:message-PSS:SHA384")
    /// RSA-PSS signature of a message hashed with SHA-512.
    public static let rsaSignatureMessagePSSSHA512 = Self(rawValue: "algid:sign:RSA:message-PSS:SHA512")
    /// RSA-PSS signature of a SHA-1 digest.
    public static let rsaSignatureDigestPSSSHA1 = Self(rawValue: "algid:sign:RSA:digest-PSS:SHA1")
    /// RSA-PSS signature of a SHA-224 digest.
    public static let rsaSignatureDigestPSSSHA224 = Self(rawValue: "algid:sign:RSA:digest-PSS:SHA224")
    /// RSA-PSS signature of a SHA-256 digest.
    public static let rsaSignatureDigestPSSSHA256 = Self(rawValue: "algid:sign:RSA:digest-PSS:SHA256")
    /// RSA-PSS signature of a SHA-384 digest.
    public static let rsaSignatureDigestPSSSHA384 = Self(rawValue: "algid:sign:RSA:digest-PSS:SHA384")
    /// RSA-PSS signature of a SHA-512 digest.
    public static let rsaSignatureDigestPSSSHA512 = Self(rawValue: "algid:sign:RSA:digest-PSS:SHA512")
    /// ECDSA signature (X9.62 DER) of a message hashed with SHA-1.
    public static let ecdsaSignatureMessageX962SHA1 = Self(rawValue: "algid:sign:ECDSA:message-X962:SHA1")
    /// ECDSA signature (X9.62 DER) of a message hashed with SHA-224.
    public static let ecdsaSignatureMessageX962SHA224 = Self(rawValue: "algid:sign:ECDSA:message-X962:SHA224")
    /// ECDSA signature (X9.62 DER) of a message hashed with SHA-256.
    public static let ecdsaSignatureMessageX962SHA256 = Self(rawValue: "algid:sign:ECDSA:message-X962:SHA256")
    /// ECDSA signature (X9.62 DER) of a message hashed with SHA-384.
    public static let ecdsaSignatureMessageX962SHA384 = Self(rawValue: "algid:sign:ECDSA:message-X962:SHA384")
    /// ECDSA signature (X9.62 DER) of a message hashed with SHA-512.
    public static let ecdsaSignatureMessageX962SHA512 = Self(rawValue: "algid:sign:ECDSA:message-X962:SHA512")
    /// ECDSA signature (X9.62 DER) of a SHA-1 digest.
    public static let ecdsaSignatureDigestX962SHA1 = Self(rawValue: "algid:sign:ECDSA:digest-X962:SHA1")
    /// ECDSA signature (X9.62 DER) of a SHA-224 digest.
    public static let ecdsaSignatureDigestX962SHA224 = Self(rawValue: "algid:sign:ECDSA:digest-X962:SHA224")
    /// ECDSA signature (X9.62 DER) of a SHA-256 digest.
    public static let ecdsaSignatureDigestX962SHA256 = Self(rawValue: "algid:sign:ECDSA:digest-X962:SHA256")
    /// ECDSA signature (X9.62 DER) of a SHA-384 digest.
    public static let ecdsaSignatureDigestX962SHA384 = Self(rawValue: "algid:sign:ECDSA:digest-X962:SHA384")
    /// ECDSA signature (X9.62 DER) of a SHA-512 digest.
    public static let ecdsaSignatureDigestX962SHA512 = Self(rawValue: "algid:sign:ECDSA:digest-X962:SHA512")

    /// The scheme the algorithm names; nil for one Sesame does not sign with.
    var scheme: SignatureScheme? {
        let parts = (rawValue as String).split(separator: ":")
        guard parts.count == 5, parts[0] == "algid", parts[1] == "sign" else { return nil }
        let form = parts[3].split(separator: "-")
        guard form.count == 2 else { return nil }
        let padding: SignatureScheme.Padding
        switch (parts[2], form[1]) {
        case ("RSA", "PKCS1v15"): padding = .rsaPKCS1v15
        case ("RSA", "PSS"): padding = .rsaPSS
        case ("ECDSA", "X962"): padding = .ecdsaX962
        default: return nil
        }
        let hash: SignatureScheme.Hash
        switch parts[4] {
        case "SHA1": hash = .sha1
        case "SHA224": hash = .sha224
        case "SHA256": hash = .sha256
        case "SHA384": hash = .sha384
        case "SHA512": hash = .sha512
        default: return nil
        }
        return SignatureScheme(padding: padding, hash: hash, inputIsDigest: form[0] == "digest")
    }
}

/// Whether `key` can do `operation` with `algorithm`: sign with a private key, verify with
/// either, in a scheme that fits the key's type.
@discardableResult
public func SecKeyIsAlgorithmSupported(
    _ key: SecKey,
    _ operation: SecKeyOperationType,
    _ algorithm: SecKeyAlgorithm
)
    -> Bool
{
    guard let scheme = algorithm.scheme, scheme.fits(key.publicKey.kind) else { return false }
    switch operation {
    case .sign: return key.isPrivate
    case .verify: return true
    case .encrypt, .decrypt, .keyExchange: return false
    }
}

/// Signs `dataToSign` (the message, or its hash for a `…Digest…` algorithm) with a private key.
@discardableResult
public func SecKeyCreateSignature(
    _ key: SecKey,
    _ algorithm: SecKeyAlgorithm,
    _ dataToSign: CFData,
    _ error: UnsafeMutablePointer<CFError?>?
) -> CFData? {
    guard let identity = key.privateKeyOwner else {
        error?.pointee = securityError(errSecParam, "a public key cannot sign")
        return nil
    }
    guard let scheme = algorithm.scheme else {
        error?.pointee = securityError(
            errSecUnimplemented,
            "\(algorithm.rawValue) is not a signature algorithm Sesame has"
        )
        return nil
    }
    do {
        return try identity.sign(dataToSign as Data, using: scheme) as NSData
    } catch let failure {
        error?.pointee = securityError(errSecParam, "\(failure)")
        return nil
    }
}

/// Whether `signature` is `key`'s over `signedData` under `algorithm`; on a mismatch `error`
/// says so (`errSecVerifyFailed`).
@discardableResult
public func SecKeyVerifySignature(
    _ key: SecKey,
    _ algorithm: SecKeyAlgorithm,
    _ signedData: CFData,
    _ signature: CFData,
    _ error: UnsafeMutablePointer<CFError?>?
) -> Bool {
    guard let scheme = algorithm.scheme else {
        error?.pointee = securityError(
            errSecUnimplemented,
            "\(algorithm.rawValue) is not a signature algorithm Sesame has"
        )
        return false
    }
    guard key.publicKey.verify(signature as Data, of: signedData as Data, using: scheme) else {
        error?.pointee = securityError(errSecVerifyFailed, "the signature does not verify")
        return false
    }
    return true
}

/// The size of a block the key works on, in bytes: the modulus for RSA.
@discardableResult
public func SecKeyGetBlockSize(_ key: SecKey) -> Int { (key.publicKey.bitCount + 7) / 8 }

/// The public key of a certificate (the name of iOS 10.3 to 12).
@available(*, deprecated, renamed: "SecCertificateCopyKey")
@discardableResult
public func SecCertificateCopyPublicKey(_ certificate: SecCertificate) -> SecKey? {
    SecCertificateCopyKey(certificate)
}

func securityError(_ status: OSStatus, _ message: String) -> CFError {
    NSError(domain: NSOSStatusErrorDomain, code: Int(status), userInfo: [NSLocalizedDescriptionKey: message])
}
