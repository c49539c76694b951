import Foundation
import Sesame

// Security.framework's keys: `SecKey` over Sesame's public keys, in Apple's formats.

/// A public key (`SecKey`). Keys made here are public; a private key stays inside its
/// ``SecIdentity`` (TLS client authentication uses it there).
public final class SecKey: NSObject, @unchecked Sendable {
    // @unchecked: immutable.
    public let publicKey: PublicKey

    public init(_ publicKey: PublicKey) { self.publicKey = publicKey }

    public override func isEqual(_ object: Any?) -> Bool { (object as? SecKey)?.publicKey == publicKey }
    public override var hash: Int { publicKey.hashValue }
    public override var description: String { "<SecKey \(publicKey.algorithm) public>" }
}

nonisolated(unsafe) public let kSecAttrKeyType: CFString = "type"
nonisolated(unsafe) public let kSecAttrKeySizeInBits: CFString = "bsiz"
nonisolated(unsafe) public let kSecAttrKeyClass: CFString = "kcls"
nonisolated(unsafe) public let kSecAttrKeyTypeRSA: CFString = "42"
nonisolated(unsafe) public let kSecAttrKeyTypeEC: CFString = "73"
nonisolated(unsafe) public let kSecAttrKeyTypeECSECPrimeRandom: CFString = "73"
nonisolated(unsafe) public let kSecAttrKeyClassPublic: CFString = "0"
nonisolated(unsafe) public let kSecAttrKeyClassPrivate: CFString = "1"
nonisolated(unsafe) public let kSecAttrKeyClassSymmetric: CFString = "2"

/// The key's bytes as Apple gives them: for RSA the DER PKCS#1 RSAPublicKey, for EC the
/// uncompressed ANSI X9.63 point `04‖X‖Y`. The pinning idiom that hashes an ASN.1 header plus
/// these bytes gets the same SHA-256 as `sesame trust` prints.
public func SecKeyCopyExternalRepresentation(_ key: SecKey, _ error: UnsafeMutablePointer<CFError?>?) -> CFData? {
    let raw = key.publicKey.rawRepresentation
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
    let kind: PublicKey.Kind
    if type == kSecAttrKeyTypeRSA as String {
        kind = .rsa
    } else if type == kSecAttrKeyTypeECSECPrimeRandom as String {
        kind = .ellipticCurve
    } else {
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
public func SecKeyCopyAttributes(_ key: SecKey) -> CFDictionary? {
    let type: CFString
    switch key.publicKey.kind {
    case .rsa: type = kSecAttrKeyTypeRSA
    case .ellipticCurve: type = kSecAttrKeyTypeECSECPrimeRandom
    case .ed25519, .other: type = key.publicKey.algorithm as NSString
    }
    let attributes: [String: Any] = [
        kSecAttrKeyType as String: type,
        kSecAttrKeySizeInBits as String: NSNumber(value: key.publicKey.bitCount),
        kSecAttrKeyClass as String: kSecAttrKeyClassPublic,
    ]
    return attributes as NSDictionary
}

/// The size of a block the key works on, in bytes: the modulus for RSA.
public func SecKeyGetBlockSize(_ key: SecKey) -> Int { (key.publicKey.bitCount + 7) / 8 }

/// The public key of a certificate (the name of iOS 10.3 to 12).
@available(*, deprecated, renamed: "SecCertificateCopyKey")
public func SecCertificateCopyPublicKey(_ certificate: SecCertificate) -> SecKey? {
    SecCertificateCopyKey(certificate)
}

func securityError(_ status: OSStatus, _ message: String) -> CFError {
    NSError(domain: NSOSStatusErrorDomain, code: Int(status), userInfo: [NSLocalizedDescriptionKey: message])
}
