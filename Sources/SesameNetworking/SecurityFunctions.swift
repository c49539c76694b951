import Foundation
import Sesame

// The rest of Security.framework's functions apps call on trusts, policies and certificates.

/// Check revocation with OCSP: only stapled responses and those given with
/// `SecTrustSetOCSPResponse` (nothing is fetched).
public let kSecRevocationOCSPMethod: CFOptionFlags = 1
/// Check revocation with CRLs. Accepted; no CRL is fetched, so it adds nothing on Linux.
public let kSecRevocationCRLMethod: CFOptionFlags = 2
/// Prefer CRLs to OCSP. Accepted without effect on Linux.
public let kSecRevocationPreferCRL: CFOptionFlags = 4
/// Fail an evaluation without a verified "good" OCSP answer for each certificate but the root.
public let kSecRevocationRequirePositiveResponse: CFOptionFlags = 8
/// Do not fetch revocation information. Always so on Linux.
public let kSecRevocationNetworkAccessDisabled: CFOptionFlags = 16
/// OCSP and CRLs, whichever is available (on Linux: the OCSP responses at hand).
public let kSecRevocationUseAnyAvailableMethod: CFOptionFlags = 3

/// A revocation policy. Sesame fetches nothing from the network: revocation is decided from the
/// OCSP responses the server staples or ``SecTrustSetOCSPResponse(_:_:)`` gives (a verified
/// "revoked" always fails); with `kSecRevocationRequirePositiveResponse`, an evaluation without
/// a verified "good" answer fails too.
@discardableResult
public func SecPolicyCreateRevocation(_ revocationFlags: CFOptionFlags) -> SecPolicy? {
    SecPolicy(.revocation(revocationFlags))
}

/// A trust for `certificates` (one `SecCertificate` or an array, leaf first) under `policies`
/// (one `SecPolicy`, an array, or nil for the basic X.509 policy), against the system roots.
@discardableResult
public func SecTrustCreateWithCertificates(
    _ certificates: CFTypeRef,
    _ policies: CFTypeRef?,
    _ trust: UnsafeMutablePointer<SecTrust?>
) -> OSStatus {
    var chain: [Certificate] = []
    if let single = certificates as? SecCertificate {
        chain = [single.certificate]
    } else if let array = certificates as? NSArray {
        for item in array {
            guard let certificate = item as? SecCertificate else { return errSecParam }
            chain.append(certificate.certificate)
        }
    }
    guard !chain.isEmpty else { return errSecParam }
    var list: [SecPolicy] = []
    if let policy = policies as? SecPolicy {
        list = [policy]
    } else if let array = policies as? NSArray {
        for item in array {
            guard let policy = item as? SecPolicy else { return errSecParam }
            list.append(policy)
        }
    } else if policies != nil {
        return errSecParam
    } else {
        list = [SecPolicyCreateBasicX509()]
    }
    var host = ""
    for policy in list {
        if case .ssl(true, let name?) = policy.kind { host = name }
    }
    let value = ServerTrust(host: host, port: 443, peerChain: chain, isResumedSession: false, trustRoots: .system)
    trust.pointee = SecTrust(value, policies: list)
    return errSecSuccess
}

/// The email addresses of a certificate: its subjectAltName rfc822Names, then the subject's
/// emailAddress attributes.
@discardableResult
public func SecCertificateCopyEmailAddresses(
    _ certificate: SecCertificate,
    _ emailAddresses: UnsafeMutablePointer<CFArray?>
) -> OSStatus {
    var emails: [String] = []
    for case .email(let address) in certificate.certificate.subjectAlternativeNames { emails.append(address) }
    for address in certificate.certificate.subject.values(of: "emailAddress") where !emails.contains(address) {
        emails.append(address)
    }
    emailAddresses.pointee = emails as NSArray
    return errSecSuccess
}

/// A sentence for a status code, as Apple words the common ones.
@discardableResult
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    let messages: [OSStatus: String] = [
        errSecSuccess: "No error.",
        errSecUnimplemented: "Function or operation not implemented.",
        errSecParam: "One or more parameters passed to a function were not valid.",
        errSecAllocate: "Failed to allocate memory.",
        errSecAuthFailed: "The user name or passphrase you entered is not correct.",
        errSecDuplicateItem: "The specified item already exists in the keychain.",
        errSecItemNotFound: "The specified item could not be found in the keychain.",
        errSecDecode: "Unable to decode the provided data.",
        errSecPkcs12VerifyFailure: "MAC verification failed during PKCS12 import (wrong password?)",
        errSecUnknownFormat: "Unknown format in import.",
        errSecNotTrusted: "The trust policy was not trusted.",
        errSecCertificateExpired: "An expired certificate was detected.",
        errSecHostNameMismatch: "A host name mismatch has occurred.",
        errSecCreateChainFailed: "One or more certificates required to validate this certificate cannot be found.",
        errSecInvalidData: "The data is not valid.",
        errSecIO: "I/O error.",
        errSecNotAvailable: "No keychain is available.",
        errSecInteractionNotAllowed: "User interaction is not allowed.",
        errSecNoSuchAttr: "The specified attribute does not exist.",
        errSecMissingEntitlement: "A required entitlement isn't present.",
    ]
    return (messages[status] ?? "OSStatus \(status)") as NSString
}

// CoreFoundation's accessors, as apps call them on what Security returns.

/// The number of bytes in `data`.
public func CFDataGetLength(_ data: CFData) -> CFIndex { data.length }

/// The bytes of `data`, valid while `data` lives (as on Apple).
public func CFDataGetBytePtr(_ data: CFData) -> UnsafePointer<UInt8>! {
    data.length == 0 ? nil : data.bytes.assumingMemoryBound(to: UInt8.self)
}

/// The number of elements in `array`.
public func CFArrayGetCount(_ array: CFArray) -> CFIndex { array.count }

/// The element at `index`, unretained: valid while `array` lives, and turned back into its
/// object with `unsafeBitCast(_:to:)` as on Apple. Foundation on Linux hands out a bridged copy
/// of an element (a dictionary becomes a Swift `Dictionary`), so the objects given out for an
/// array are kept with it until it is gone.
public func CFArrayGetValueAtIndex(_ array: CFArray, _ index: CFIndex) -> UnsafeRawPointer! {
    guard index >= 0, index < array.count else { return nil }
    let object = ArrayElementObjects.shared.object(of: array, at: index)
    return UnsafeRawPointer(Unmanaged.passUnretained(object).toOpaque())
}

/// The element objects ``CFArrayGetValueAtIndex(_:_:)`` gave out, per array still alive.
private final class ArrayElementObjects: @unchecked Sendable {
    // @unchecked: `entries` is only touched under `lock`.
    static let shared = ArrayElementObjects()

    private struct Entry {
        weak var array: NSArray?
        var objects: [AnyObject]
    }

    private let lock = NSLock()
    private var entries: [ObjectIdentifier: Entry] = [:]

    func object(of array: NSArray, at index: Int) -> AnyObject {
        lock.lock()
        defer { lock.unlock() }
        entries = entries.filter { $0.value.array != nil }
        let key = ObjectIdentifier(array)
        if let entry = entries[key], entry.array === array, entry.objects.count == array.count {
            return entry.objects[index]
        }
        let objects = (0..<array.count).map { array[$0] as AnyObject }
        entries[key] = Entry(array: array, objects: objects)
        return objects[index]
    }
}
