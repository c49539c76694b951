import Foundation
import Sesame

// Security.framework's trust, certificate, identity, key and policy objects, as reference types
// over Sesame's values, with the functions apps call. Status codes are Apple's.

public typealias OSStatus = Int32
public typealias CFIndex = Int
public typealias CFTypeRef = AnyObject
public typealias CFData = NSData
public typealias CFArray = NSArray
public typealias CFDictionary = NSDictionary
public typealias CFString = NSString
public typealias CFError = NSError
public typealias CFAllocator = AnyObject
public typealias CFOptionFlags = UInt
public typealias CFBoolean = NSNumber

public let kCFBooleanTrue: CFBoolean! = NSNumber(value: true)
public let kCFBooleanFalse: CFBoolean! = NSNumber(value: false)

public let errSecSuccess: OSStatus = 0
/// MacTypes' "no error", an `Int` as Apple's SDK imports it (`status == noErr` compares across integer types).
public let noErr: Int = 0
public let errSecUnimplemented: OSStatus = -4
public let errSecParam: OSStatus = -50
public let errSecAllocate: OSStatus = -108
public let errSecAuthFailed: OSStatus = -25293
public let errSecItemNotFound: OSStatus = -25300
public let errSecDuplicateItem: OSStatus = -25299
public let errSecVerifyFailed: OSStatus = -67808
public let errSecDecode: OSStatus = -26275
public let errSecPkcs12VerifyFailure: OSStatus = -25264
public let errSecUnknownFormat: OSStatus = -25257
public let errSecNotTrusted: OSStatus = -67843
public let errSecCertificateExpired: OSStatus = -67818
public let errSecHostNameMismatch: OSStatus = -67602
public let errSecCreateChainFailed: OSStatus = -67657
public let errSecInvalidData: OSStatus = -67673

/// The result of `SecTrustEvaluate`, Apple's values.
public enum SecTrustResultType: UInt32, Sendable {
    case invalid = 0
    case proceed = 1
    case confirm = 2
    case deny = 3
    case unspecified = 4
    case recoverableTrustFailure = 5
    case fatalTrustFailure = 6
    case otherError = 7
}

/// A certificate (`SecCertificate`).
public final class SecCertificate: NSObject, @unchecked Sendable {
    // @unchecked: immutable.
    public let certificate: Certificate

    public init(_ certificate: Certificate) { self.certificate = certificate }

    public override func isEqual(_ object: Any?) -> Bool {
        (object as? SecCertificate)?.certificate == certificate
    }
    public override var hash: Int { certificate.hashValue }
    public override var description: String { "<SecCertificate \(certificate.subject)>" }
}

/// A certificate with its private key (`SecIdentity`).
public final class SecIdentity: NSObject, @unchecked Sendable {
    // @unchecked: immutable.
    public let identity: Identity

    public init(_ identity: Identity) { self.identity = identity }

    public override func isEqual(_ object: Any?) -> Bool { (object as? SecIdentity)?.identity == identity }
    public override var hash: Int { identity.hashValue }
}

/// What a trust is evaluated for (`SecPolicy`).
public final class SecPolicy: NSObject, @unchecked Sendable {
    // @unchecked: immutable.
    enum Kind: Equatable {
        /// TLS: a server (with its name checked when given) or a client.
        case ssl(server: Bool, hostname: String?)
        /// The chain alone, no name.
        case basicX509
        /// How revocation is checked (`kSecRevocation…` flags).
        case revocation(CFOptionFlags)
    }
    let kind: Kind
    init(_ kind: Kind) { self.kind = kind }
}

/// A server's certificate chain and how to evaluate it (`SecTrust`): the challenge's
/// `protectionSpace.serverTrust`. Anchors and policies set on it change what ``SecTrustEvaluate(_:_:)``
/// and the `URLCredential(trust:)` made from it accept.
public final class SecTrust: NSObject, @unchecked Sendable {
    // @unchecked: every mutable field is behind `lock`.
    private let lock = NSLock()
    private var trust: ServerTrust
    private var anchors: [Certificate]?
    private var anchorsOnly = true
    private var policies: [SecPolicy]

    public init(_ trust: ServerTrust) {
        self.trust = trust
        policies = [SecPolicy(.ssl(server: true, hostname: trust.host))]
    }

    init(_ trust: ServerTrust, policies: [SecPolicy]) {
        self.trust = trust
        self.policies = policies
    }

    /// What the revocation policies among ``policies`` ask (`SecPolicyCreateRevocation`).
    var revocationFlags: CFOptionFlags {
        lock.withLock {
            policies.reduce(0) { flags, policy in
                if case .revocation(let more) = policy.kind { return flags | more }
                return flags
            }
        }
    }

    /// The Sesame trust as it is now set: anchors, policies, OCSP responses, validation date.
    public var serverTrust: ServerTrust {
        lock.lock()
        defer { lock.unlock() }
        var value = trust
        if let anchors { value = value.settingAnchors(anchors, addingSystemRoots: !anchorsOnly) }
        if let ssl = policies.lazy.compactMap({ policy -> String?? in
            if case .ssl(true, let hostname) = policy.kind { return .some(hostname) }
            return nil
        }).first {
            value.validatesHost = ssl != nil
        } else {
            value.validatesHost = false
        }
        return value
    }

    var peerChain: [Certificate] { lock.withLock { trust.peerChain } }

    /// Every reason the trust is not trusted under its policies; empty when trusted.
    func failures() -> [String] {
        let evaluation = serverTrust.evaluate()
        var failures = evaluation.failures.map(\.description)
        if revocationFlags & kSecRevocationRequirePositiveResponse != 0, evaluation.ocspStatus?.status != .good {
            failures.append("the revocation policy requires a positive OCSP response and none was verified")
        }
        return failures
    }

    func setAnchors(_ certificates: [Certificate]) { lock.withLock { anchors = certificates } }
    func setAnchorsOnly(_ only: Bool) { lock.withLock { anchorsOnly = only } }
    func setPolicies(_ new: [SecPolicy]) { lock.withLock { policies = new } }
    func update(_ change: (inout ServerTrust) -> Void) { lock.withLock { change(&trust) } }
}

// MARK: - Trust

@discardableResult
public func SecTrustGetCertificateCount(_ trust: SecTrust) -> CFIndex { trust.peerChain.count }

@discardableResult
public func SecTrustGetCertificateAtIndex(_ trust: SecTrust, _ index: CFIndex) -> SecCertificate? {
    let chain = trust.peerChain
    return chain.indices.contains(index) ? SecCertificate(chain[index]) : nil
}

/// The chain as the server sent it, leaf first (an array of `SecCertificate`).
@discardableResult
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? {
    trust.peerChain.map(SecCertificate.init) as NSArray
}

/// Replaces the roots the trust is evaluated against (an array of `SecCertificate`); the system's
/// roots stop counting unless ``SecTrustSetAnchorCertificatesOnly(_:_:)`` says otherwise.
@discardableResult
public func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray?) -> OSStatus {
    guard let array = anchorCertificates else {
        trust.setAnchors([])
        return errSecSuccess
    }
    var certificates: [Certificate] = []
    for item in array {
        guard let certificate = item as? SecCertificate else { return errSecParam }
        certificates.append(certificate.certificate)
    }
    trust.setAnchors(certificates)
    return errSecSuccess
}

@discardableResult
public func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus {
    trust.setAnchorsOnly(anchorCertificatesOnly)
    return errSecSuccess
}

/// Sets the policies (one `SecPolicy` or an array of them).
@discardableResult
public func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus {
    if let policy = policies as? SecPolicy {
        trust.setPolicies([policy])
        return errSecSuccess
    }
    guard let array = policies as? NSArray else { return errSecParam }
    var list: [SecPolicy] = []
    for item in array {
        guard let policy = item as? SecPolicy else { return errSecParam }
        list.append(policy)
    }
    trust.setPolicies(list)
    return errSecSuccess
}

/// A stapled OCSP response (or an array of them, as `Data`) to check the leaf against.
@discardableResult
public func SecTrustSetOCSPResponse(_ trust: SecTrust, _ responseData: CFTypeRef?) -> OSStatus {
    var responses: [Data] = []
    if let data = responseData as? Data {
        responses = [data]
    } else if let data = responseData as? NSData {
        responses = [data as Data]
    } else if let array = responseData as? NSArray {
        for item in array {
            guard let data = (item as? Data) ?? (item as? NSData).map({ $0 as Data }) else { return errSecParam }
            responses.append(data)
        }
    } else if responseData != nil {
        return errSecParam
    }
    trust.update { $0.ocspResponses = responses }
    return errSecSuccess
}

/// Evaluates at `verifyDate` instead of now.
@discardableResult
public func SecTrustSetVerifyDate(_ trust: SecTrust, _ verifyDate: Date) -> OSStatus {
    trust.update { $0.validationDate = verifyDate }
    return errSecSuccess
}

@discardableResult
public func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy {
    SecPolicy(.ssl(server: server, hostname: hostname.map { $0 as String }))
}

@discardableResult
public func SecPolicyCreateBasicX509() -> SecPolicy { SecPolicy(.basicX509) }

/// Evaluates the trust (`kSecTrustResultUnspecified` when trusted, `.recoverableTrustFailure`
/// when not). Deprecated by Apple for ``SecTrustEvaluateWithError(_:_:)``, which says why.
@discardableResult
public func SecTrustEvaluate(_ trust: SecTrust, _ result: UnsafeMutablePointer<SecTrustResultType>) -> OSStatus {
    result.pointee = trust.failures().isEmpty ? .unspecified : .recoverableTrustFailure
    return errSecSuccess
}

/// Evaluates the trust; on failure `error` (when given) holds every reason, in Apple's domain
/// with `errSecNotTrusted` (or a more specific code when there is one).
@discardableResult
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool {
    let failures = trust.failures()
    guard !failures.isEmpty else { return true }
    error?.pointee = NSError(
        domain: NSOSStatusErrorDomain,
        code: Int(errSecNotTrusted),
        userInfo: [NSLocalizedDescriptionKey: "not trusted: " + failures.joined(separator: "; ")]
    )
    return false
}

/// The leaf's public key.
@discardableResult
public func SecTrustCopyKey(_ trust: SecTrust) -> SecKey? { trust.peerChain.first.map { SecKey($0.publicKey) } }

@available(*, deprecated, renamed: "SecTrustCopyKey")
@discardableResult
public func SecTrustCopyPublicKey(_ trust: SecTrust) -> SecKey? { SecTrustCopyKey(trust) }

// MARK: - Certificates, keys, identities

/// A certificate from DER bytes; nil when they are not one.
@discardableResult
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? {
    (try? Certificate(derEncoded: data as Data)).map(SecCertificate.init)
}

@discardableResult
public func SecCertificateCopyData(_ certificate: SecCertificate) -> CFData {
    certificate.certificate.derEncoded as NSData
}

/// The subject's common name, else the whole subject.
@discardableResult
public func SecCertificateCopySubjectSummary(_ certificate: SecCertificate) -> CFString? {
    let subject = certificate.certificate.subject
    return (subject.commonName ?? subject.description) as NSString
}

@discardableResult
public func SecCertificateCopyKey(_ certificate: SecCertificate) -> SecKey? {
    SecKey(certificate.certificate.publicKey)
}

@discardableResult
public func SecIdentityCopyCertificate(
    _ identity: SecIdentity,
    _ certificateRef: UnsafeMutablePointer<SecCertificate?>
)
    -> OSStatus
{
    certificateRef.pointee = SecCertificate(identity.identity.certificate)
    return errSecSuccess
}

nonisolated(unsafe) public let kSecImportExportPassphrase: CFString = "passphrase"
nonisolated(unsafe) public let kSecImportItemIdentity: CFString = "identity"
nonisolated(unsafe) public let kSecImportItemTrust: CFString = "trust"
nonisolated(unsafe) public let kSecImportItemCertChain: CFString = "chain"
nonisolated(unsafe) public let kSecImportItemLabel: CFString = "label"
nonisolated(unsafe) public let kSecImportItemKeyID: CFString = "keyid"

/// Imports a PKCS#12 file's identity: one dictionary with `kSecImportItemIdentity`,
/// `kSecImportItemCertChain`, `kSecImportItemTrust` (the chain, to evaluate against the system
/// roots), `kSecImportItemLabel` and `kSecImportItemKeyID` (the SHA-1 of the public key's bits,
/// as Apple's), keyed by those `CFString`s' text. A wrong passphrase is `errSecAuthFailed`,
/// bytes that are not PKCS#12 `errSecDecode`.
@discardableResult
public func SecPKCS12Import(
    _ pkcs12Data: CFData,
    _ options: CFDictionary,
    _ items: UnsafeMutablePointer<CFArray?>
) -> OSStatus {
    let password =
        (options[kSecImportExportPassphrase as String] as? String)
        ?? (options[kSecImportExportPassphrase as String] as? NSString).map { $0 as String } ?? ""
    do {
        let identity = try Identity(pkcs12: pkcs12Data as Data, password: password)
        let chain = identity.certificateChain
        let trust = ServerTrust(
            host: "",
            port: 0,
            peerChain: chain,
            isResumedSession: false,
            trustRoots: .system
        )
        let item: [String: Any] = [
            kSecImportItemIdentity as String: SecIdentity(identity),
            kSecImportItemCertChain as String: chain.map(SecCertificate.init) as NSArray,
            kSecImportItemTrust as String: SecTrust(trust, policies: [SecPolicyCreateBasicX509()]),
            kSecImportItemLabel as String: identity.certificate.subject.commonName
                ?? identity.certificate.subject.description,
            kSecImportItemKeyID as String: identity.certificate.publicKey.keyIdentifier as NSData,
        ]
        items.pointee = [item as NSDictionary] as NSArray
        return errSecSuccess
    } catch let error as SesameError where error.code == .wrongPassword {
        return errSecAuthFailed
    } catch {
        return errSecDecode
    }
}
