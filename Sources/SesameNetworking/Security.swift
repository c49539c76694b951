import Foundation
import Sesame

// Security.framework's trust, certificate, identity, key and policy objects, as reference types
// over Sesame's values, with the functions apps call. Status codes are Apple's.

/// The result of a Security function: `errSecSuccess`, or an error code.
public typealias OSStatus = Int32
/// A count or an index, as CoreFoundation types them.
public typealias CFIndex = Int
/// Any CoreFoundation object: here, any class instance.
public typealias CFTypeRef = AnyObject
/// Bytes, as CoreFoundation names them: `NSData`, to which `Data` bridges with `as`.
public typealias CFData = NSData
/// An array, as CoreFoundation names it: `NSArray`.
public typealias CFArray = NSArray
/// A dictionary, as CoreFoundation names it: `NSDictionary`, to which a Swift dictionary bridges
/// with `as`.
public typealias CFDictionary = NSDictionary
/// A string, as CoreFoundation names it: `NSString`, to which `String` bridges with `as`.
public typealias CFString = NSString
/// An error, as CoreFoundation names it: `NSError`.
public typealias CFError = NSError
/// A CoreFoundation allocator. Accepted and ignored: pass nil, as Apple code does.
public typealias CFAllocator = AnyObject
/// Option bits, as CoreFoundation types them.
public typealias CFOptionFlags = UInt
/// A Boolean object, as CoreFoundation names it: `NSNumber`.
public typealias CFBoolean = NSNumber

/// True, as an object.
public let kCFBooleanTrue: CFBoolean! = NSNumber(value: true)
/// False, as an object.
public let kCFBooleanFalse: CFBoolean! = NSNumber(value: false)

/// No error.
public let errSecSuccess: OSStatus = 0
/// MacTypes' "no error", an `Int` as Apple's SDK imports it (`status == noErr` compares across integer types).
public let noErr: Int = 0
/// The function or option is not implemented.
public let errSecUnimplemented: OSStatus = -4
/// A parameter is missing or has the wrong type.
public let errSecParam: OSStatus = -50
/// Memory could not be allocated.
public let errSecAllocate: OSStatus = -108
/// The password is wrong (a PKCS #12 file), or authorization failed.
public let errSecAuthFailed: OSStatus = -25293
/// No item matches.
public let errSecItemNotFound: OSStatus = -25300
/// An item with the same identity exists already.
public let errSecDuplicateItem: OSStatus = -25299
/// A signature did not verify.
public let errSecVerifyFailed: OSStatus = -67808
/// The data cannot be decoded.
public let errSecDecode: OSStatus = -26275
/// The PKCS #12 file's integrity check failed (a wrong passphrase, or changed data).
public let errSecPkcs12VerifyFailure: OSStatus = -25264
/// The data is in no format the function reads.
public let errSecUnknownFormat: OSStatus = -25257
/// The certificate chain is not trusted.
public let errSecNotTrusted: OSStatus = -67843
/// A certificate has expired.
public let errSecCertificateExpired: OSStatus = -67818
/// The certificate does not name the host.
public let errSecHostNameMismatch: OSStatus = -67602
/// No chain could be built to a trust anchor.
public let errSecCreateChainFailed: OSStatus = -67657
/// The data is not valid.
public let errSecInvalidData: OSStatus = -67673

/// The result of `SecTrustEvaluate`, Apple's values.
public enum SecTrustResultType: UInt32, Sendable {
    /// The evaluation did not run.
    case invalid = 0
    /// Trusted because the user chose to trust the chain. Never returned on Linux, where there are
    /// no per-user trust settings.
    case proceed = 1
    /// Ask the user (deprecated by Apple; never returned).
    case confirm = 2
    /// The user chose not to trust the chain (never returned on Linux).
    case deny = 3
    /// Trusted: the chain ends at a trust root and every check passed.
    case unspecified = 4
    /// Not trusted. On Linux every failure is reported this way;
    /// ``SecTrustEvaluateWithError(_:_:)`` says why.
    case recoverableTrustFailure = 5
    /// Not trusted, for a reason no one can override. Never returned on Linux: `SecTrustEvaluate`
    /// reports every failure as recoverable.
    case fatalTrustFailure = 6
    /// The evaluation could not be done. Never returned on Linux.
    case otherError = 7
}

/// A certificate (`SecCertificate`).
public final class SecCertificate: NSObject, @unchecked Sendable {
    // @unchecked: immutable.
    /// Sesame's certificate.
    public let certificate: Certificate

    /// A `SecCertificate` for `certificate`.
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
    /// Sesame's identity.
    public let identity: Identity

    /// A `SecIdentity` for `identity`.
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

    /// A trust for `trust`'s chain, with its anchors and no policy beyond its own.
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

/// The number of certificates the server sent.
@discardableResult
public func SecTrustGetCertificateCount(_ trust: SecTrust) -> CFIndex { trust.peerChain.count }

/// The certificate the server sent at `index` (0 is the leaf), or nil past the end (deprecated by
/// Apple for `SecTrustCopyCertificateChain`).
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

/// With true (the default once anchors are set), only the anchors set on the trust are trusted;
/// with false, the system's roots are trusted as well.
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

/// A TLS policy: for a server certificate naming `hostname` (unchecked when nil) when `server` is
/// true, for a client certificate otherwise.
@discardableResult
public func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy {
    SecPolicy(.ssl(server: server, hostname: hostname.map { $0 as String }))
}

/// A policy checking the chain alone: signatures, validity and CA constraints, no name and no
/// purpose.
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

/// The leaf's public key (deprecated by Apple for `SecTrustCopyKey`).
@available(*, deprecated, renamed: "SecTrustCopyKey")
@discardableResult
public func SecTrustCopyPublicKey(_ trust: SecTrust) -> SecKey? { SecTrustCopyKey(trust) }

// MARK: - Certificates, keys, identities

/// A certificate from DER bytes; nil when they are not one.
@discardableResult
public func SecCertificateCreateWithData(_ allocator: CFAllocator?, _ data: CFData) -> SecCertificate? {
    (try? Certificate(derEncoded: data as Data)).map(SecCertificate.init)
}

/// The certificate's DER encoding.
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

/// The certificate's public key.
@discardableResult
public func SecCertificateCopyKey(_ certificate: SecCertificate) -> SecKey? {
    SecKey(certificate.certificate.publicKey)
}

/// Stores the identity's certificate in `certificateRef`; returns `errSecSuccess`.
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

/// The passphrase of the PKCS #12 data given to `SecPKCS12Import`.
nonisolated(unsafe) public let kSecImportExportPassphrase: CFString = "passphrase"
/// The imported identity (`SecIdentity`).
nonisolated(unsafe) public let kSecImportItemIdentity: CFString = "identity"
/// A trust for the imported certificate chain (`SecTrust`).
nonisolated(unsafe) public let kSecImportItemTrust: CFString = "trust"
/// The imported certificate chain, leaf first (`[SecCertificate]`).
nonisolated(unsafe) public let kSecImportItemCertChain: CFString = "chain"
/// The imported item's friendly name, if the file gives one.
nonisolated(unsafe) public let kSecImportItemLabel: CFString = "label"
/// The imported key's local key identifier, if the file gives one.
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
