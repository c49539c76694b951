import Sesame

/// What ``AFSecurityPolicy`` compares with its pinned certificates (`AFSSLPinningMode`).
public enum AFSSLPinningMode: UInt, Sendable {
    /// No pinning: the chain and the name are validated, nothing more.
    case none = 0
    /// A public key of the validated chain must be a pinned certificate's key.
    case publicKey = 1
    /// A certificate of the validated chain must be a pinned certificate (pins are the anchors).
    case certificate = 2
}

/// AFNetworking's `AFSecurityPolicy`, evaluated by Sesame's ``SecurityPolicy``: validation first,
/// pinning on top of it.
///
/// Differences from AFNetworking, all toward refusing more:
/// - With `allowInvalidCertificates` in public-key mode, only the server's own (leaf) key counts:
///   AFNetworking accepted any certificate the server sent, so a pinned certificate appended to an
///   unrelated chain passed.
/// - `validatesDomainName` with a nil domain checks the host the connection was made to
///   (AFNetworking then checked no name).
/// - Pinned data that is not a certificate (DER, or PEM text) matches nothing, as in AFNetworking.
open class AFSecurityPolicy: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: the mutable settings are behind `lock`.
    private let lock = NSLock()
    private let mode: AFSSLPinningMode
    private var pins: Set<Data>?
    private var parsedPins: Set<Certificate> = []
    private var allowsInvalid = false
    private var validatesDomain = true

    /// The pinning mode, fixed when the policy is made.
    open var sslPinningMode: AFSSLPinningMode { mode }

    /// The pinned certificates as DER data.
    open var pinnedCertificates: Set<Data>? {
        get { lock.withLock { pins } }
        set {
            let parsed = Set((newValue ?? []).compactMap(Self.certificate(from:)))
            lock.withLock {
                pins = newValue
                parsedPins = parsed
            }
        }
    }

    /// Accept chains that do not validate (self-signed, expired, unknown root): default off.
    open var allowInvalidCertificates: Bool {
        get { lock.withLock { allowsInvalid } }
        set { lock.withLock { allowsInvalid = newValue } }
    }

    /// Check the certificate's names against the domain: default on.
    open var validatesDomainName: Bool {
        get { lock.withLock { validatesDomain } }
        set { lock.withLock { validatesDomain = newValue } }
    }

    /// No pinning, valid chains and matching names only (`defaultPolicy`).
    open class func `default`() -> AFSecurityPolicy { AFSecurityPolicy(mode: .none, pinned: nil) }

    /// A policy pinning the `.cer` files next to the program (AFNetworking's main bundle).
    public convenience init(pinningMode: AFSSLPinningMode) {
        self.init(pinningMode: pinningMode, withPinnedCertificates: AFSecurityPolicy.certificates(in: Bundle.main))
    }

    /// A policy pinning in `pinningMode` to these DER-encoded certificates.
    public convenience init(pinningMode: AFSSLPinningMode, withPinnedCertificates pinnedCertificates: Set<Data>) {
        self.init(mode: pinningMode, pinned: pinnedCertificates)
    }

    init(mode: AFSSLPinningMode, pinned: Set<Data>?) {
        self.mode = mode
        super.init()
        self.pinnedCertificates = pinned
    }

    /// The `.cer` files at the top of `bundle`'s resources (`certificatesInBundle:`); a file that
    /// cannot be read is left out. On Linux a bundle is a folder: `Bundle(path: folder)`.
    open class func certificates(in bundle: Bundle) -> Set<Data> {
        certificates(in: URL(fileURLWithPath: bundle.resourcePath ?? bundle.bundlePath, isDirectory: true))
    }

    /// The `.cer` files at the top of `directory` (regular files only, as Sesame reads every
    /// certificate file).
    open class func certificates(in directory: URL) -> Set<Data> {
        guard let folder = try? UserFile.readFolder(directory.path, as: .certificates) else { return [] }
        var result = Set<Data>()
        for file in folder.files where (file.name as NSString).pathExtension.lowercased() == "cer" {
            result.insert(Data(file.bytes))
        }
        return result
    }

    /// Whether `serverTrust` passes the policy for `domain`. As AFNetworking's, this sets the
    /// trust's policies (SSL with the domain, or basic X.509 when names are not checked) and, in
    /// certificate mode, its anchors (the pins), so a `URLCredential(trust:)` made from it says
    /// what was evaluated.
    open func evaluateServerTrust(_ serverTrust: SecTrust, forDomain domain: String?) -> Bool {
        evaluation(of: serverTrust, forDomain: domain).isTrusted
    }

    /// The evaluation with every reason for a refusal.
    func evaluation(of serverTrust: SecTrust, forDomain domain: String?) -> SecurityPolicy.Evaluation {
        let (policy, pinned) = lock.withLock { () -> (SecurityPolicy, Set<Certificate>) in
            var policy = SecurityPolicy(pinningMode: mode.sesame, pinnedCertificates: parsedPins)
            policy.allowInvalidCertificates = allowsInvalid
            policy.validatesDomainName = validatesDomain
            return (policy, parsedPins)
        }
        SecTrustSetPolicies(
            serverTrust,
            policy.validatesDomainName ? SecPolicyCreateSSL(true, domain as NSString?) : SecPolicyCreateBasicX509()
        )
        if mode == .certificate {
            SecTrustSetAnchorCertificates(serverTrust, pinned.map(SecCertificate.init) as NSArray)
        }
        return policy.evaluation(of: serverTrust.serverTrust, forDomain: domain)
    }

    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = AFSecurityPolicy(mode: mode, pinned: pinnedCertificates)
        copy.allowInvalidCertificates = allowInvalidCertificates
        copy.validatesDomainName = validatesDomainName
        return copy
    }

    open override var description: String {
        "<AFSecurityPolicy mode: \(mode), pins: \(pinnedCertificates?.count ?? 0), allowInvalidCertificates: \(allowInvalidCertificates), validatesDomainName: \(validatesDomainName)>"
    }

    private static func certificate(from data: Data) -> Certificate? {
        if let certificate = try? Certificate(derEncoded: data) { return certificate }
        guard let text = String(data: data, encoding: .utf8) else { return nil }
        return try? Certificate(pemEncoded: text)
    }
}

extension AFSSLPinningMode {
    var sesame: SecurityPolicy.PinningMode {
        switch self {
        case .none: .none
        case .publicKey: .publicKey
        case .certificate: .certificate
        }
    }
}
