import Foundation
import Sesame

/// The five kinds of keychain item.
enum KeychainClass: String, CaseIterable {
    case genericPassword = "genp"
    case internetPassword = "inet"
    case certificate = "cert"
    case key = "keys"
    case identity = "idnt"

    /// The attributes that make an item unique in its class (Apple's primary keys): adding a
    /// second item that agrees on all of them is `errSecDuplicateItem`.
    var primaryKey: [String] {
        let common = [kSecAttrAccessGroup as String, kSecAttrSynchronizable as String]
        switch self {
        case .genericPassword:
            return [kSecAttrAccount as String, kSecAttrService as String] + common
        case .internetPassword:
            // The fields of the protection space and the account: what the credential store keys by.
            return [
                kSecAttrServer as String, kSecAttrPort as String, kSecAttrProtocol as String,
                kSecAttrSecurityDomain as String, kSecAttrAuthenticationType as String, kSecAttrAccount as String,
            ]
        case .certificate:
            return [
                kSecAttrCertificateType as String, kSecAttrIssuer as String, kSecAttrSerialNumber as String,
            ] + common
        case .key, .identity:
            return [
                kSecAttrKeyClass as String, kSecAttrApplicationLabel as String, kSecAttrApplicationTag as String,
                kSecAttrKeyType as String, kSecAttrKeySizeInBits as String, kSecAttrEffectiveKeySize as String,
            ] + common
        }
    }

    /// Attributes read from the certificate or key itself, which no caller sets or changes.
    var derivedAttributes: Set<String> {
        switch self {
        case .certificate:
            [
                kSecAttrCertificateType as String, kSecAttrCertificateEncoding as String, kSecAttrSubject as String,
                kSecAttrIssuer as String, kSecAttrSerialNumber as String, kSecAttrSubjectKeyID as String,
                kSecAttrPublicKeyHash as String,
            ]
        case .key:
            [
                kSecAttrKeyType as String, kSecAttrKeySizeInBits as String, kSecAttrEffectiveKeySize as String,
                kSecAttrKeyClass as String,
            ]
        case .identity:
            KeychainClass.certificate.derivedAttributes.union(KeychainClass.key.derivedAttributes)
        case .genericPassword, .internetPassword:
            []
        }
    }
}

/// One keychain item as the SecItem functions see it: its class, attributes (without
/// `kSecClass`), the secret or encoded value `kSecReturnData` gives, and the object
/// `kSecReturnRef` gives.
struct KeychainItem {
    var itemClass: KeychainClass
    /// Unique in its class for as long as the item exists (its persistent reference).
    var id: String
    var attributes: [String: KeychainValue]
    var data: Data?
    var reference: AnyObject?
    /// False for another program's password, which Sesame reads but never rewrites or removes.
    var isWritable = true

    /// `kSecValuePersistentRef`: the class and identifier.
    var persistentReference: Data { Data("sesame-keychain:\(itemClass.rawValue):\(id)".utf8) }

    /// The attributes Apple returns for `kSecReturnAttributes`, `kSecClass` included.
    var attributeDictionary: [String: AnyObject] {
        var result = attributes.mapValues(\.object)
        result[kSecClass as String] = itemClass.rawValue as NSString
        return result
    }

    /// The item's values for its class's primary key (absent ones as nil; an absent
    /// synchronizable flag is false, an absent access group empty).
    var primaryKey: [KeychainValue?] {
        itemClass.primaryKey.map { name in
            if let value = attributes[name] { return value }
            if name == kSecAttrSynchronizable as String { return .bool(false) }
            if name == kSecAttrAccessGroup as String { return .string("") }
            return nil
        }
    }

    static func parsePersistentReference(_ data: Data) -> (KeychainClass, String)? {
        let text = String(decoding: data, as: UTF8.self)
        let parts = text.split(separator: ":", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == "sesame-keychain", let itemClass = KeychainClass(rawValue: String(parts[1]))
        else { return nil }
        return (itemClass, String(parts[2]))
    }
}

// MARK: - Certificates and keys

extension KeychainItem {
    /// The attributes Apple reads from a certificate: type and encoding (X.509 v3, DER), the
    /// subject's and issuer's DER names, the serial number's bytes, the subject key identifier,
    /// the SHA-1 of the public key, and (unless given) the subject summary as the label.
    static func certificateAttributes(_ certificate: Certificate) -> [String: KeychainValue] {
        var attributes: [String: KeychainValue] = [
            kSecAttrCertificateType as String: .number(3),  // CSSM_CERT_X_509v3
            kSecAttrCertificateEncoding as String: .number(3),  // CSSM_CERT_ENCODING_DER
            kSecAttrSubject as String: .data(certificate.subject.derEncoded),
            kSecAttrIssuer as String: .data(certificate.issuer.derEncoded),
            kSecAttrSerialNumber as String: .data(serialNumberBytes(certificate.serialNumber)),
            kSecAttrPublicKeyHash as String: .data(certificate.publicKey.keyIdentifier),
            kSecAttrLabel as String: .string(subjectSummary(certificate)),
        ]
        if let identifier = certificate.subjectKeyIdentifier {
            attributes[kSecAttrSubjectKeyID as String] = .data(identifier)
        }
        return attributes
    }

    /// The attributes Apple reads from a key; the application label, unless given, is the
    /// SHA-1 of the public key, which is how an identity's key finds its certificate.
    static func keyAttributes(_ key: SecKey) -> [String: KeychainValue] {
        let type = PublicKey.Kind.secKeyType(of: key.publicKey) as String
        let bits = Int64(key.publicKey.bitCount)
        let isPrivate = key.privateKeyOwner != nil
        return [
            kSecAttrKeyType as String: .string(type),
            kSecAttrKeySizeInBits as String: .number(bits),
            kSecAttrEffectiveKeySize as String: .number(bits),
            kSecAttrKeyClass as String: .string(
                (isPrivate ? kSecAttrKeyClassPrivate : kSecAttrKeyClassPublic) as String
            ),
            kSecAttrApplicationLabel as String: .data(key.publicKey.keyIdentifier),
            kSecAttrIsPermanent as String: .bool(true),
            kSecAttrCanSign as String: .bool(isPrivate),
            kSecAttrCanDecrypt as String: .bool(isPrivate && key.publicKey.kind == .rsa),
            kSecAttrCanVerify as String: .bool(!isPrivate),
            kSecAttrCanEncrypt as String: .bool(!isPrivate && key.publicKey.kind == .rsa),
            kSecAttrCanDerive as String: .bool(key.publicKey.kind == .ellipticCurve),
        ]
    }

    /// What a key item keeps: a public key's external representation, or for a private key the
    /// PEM of its identity's certificate chain and key (so the key can sign again when read).
    static func storedBytes(of key: SecKey) throws(KeychainFailure) -> Data {
        guard let owner = key.privateKeyOwner else {
            let raw = key.publicKey.rawRepresentation
            guard !raw.isEmpty else {
                throw KeychainFailure(errSecUnimplemented, "\(key.publicKey.algorithm) keys cannot be kept")
            }
            return raw
        }
        let pem = owner.unencryptedPrivateKeyPEM
        guard !pem.isEmpty else { throw KeychainFailure(errSecParam, "the private key could not be encoded") }
        return Data((owner.certificateChain.map(\.pemEncoded).joined() + pem).utf8)
    }

    /// The key a key item's bytes and attributes describe; nil when they do not make one.
    static func key(stored bytes: Data, attributes: [String: KeychainValue]) -> SecKey? {
        if attributes[kSecAttrKeyClass as String]?.text == kSecAttrKeyClassPrivate as String {
            let pem = String(decoding: bytes, as: UTF8.self)
            return (try? Identity(certificatePEM: pem, privateKeyPEM: pem)).map(SecKey.init(privateKeyOf:))
        }
        guard let kind = PublicKey.Kind(secKeyType: attributes[kSecAttrKeyType as String]?.text) else { return nil }
        return (try? PublicKey(rawRepresentation: bytes, kind: kind)).map(SecKey.init)
    }

    /// The serial number's bytes as a DER INTEGER holds them (a leading zero when the high bit
    /// is set), from its hexadecimal text.
    private static func serialNumberBytes(_ hex: String) -> Data {
        let digits = Array((hex.count % 2 == 1 ? "0" + hex : hex).utf8)
        var bytes: [UInt8] = []
        var index = 0
        while index + 1 < digits.count {
            guard let byte = UInt8(String(decoding: digits[index...index + 1], as: UTF8.self), radix: 16) else {
                return Data()
            }
            bytes.append(byte)
            index += 2
        }
        if let first = bytes.first, first & 0x80 != 0 { bytes.insert(0, at: 0) }
        return Data(bytes)
    }

    private static func subjectSummary(_ certificate: Certificate) -> String {
        certificate.subject.firstValue(of: "CN") ?? certificate.subject.description
    }
}

/// A status for a SecItem function, and what to tell the developer on standard error.
struct KeychainFailure: Error {
    let status: OSStatus
    let message: String

    init(_ status: OSStatus, _ message: String) {
        self.status = status
        self.message = message
    }

    /// A store's error as the status Apple gives for the same situation.
    init(_ error: SesameError) {
        switch error.code {
        case .credentialStoreLocked: self.init(errSecInteractionNotAllowed, "\(error)")
        case .credentialStoreUnavailable, .timeout: self.init(errSecNotAvailable, "\(error)")
        case .invalidArgument: self.init(errSecParam, "\(error)")
        default: self.init(errSecIO, "\(error)")
        }
    }
}
