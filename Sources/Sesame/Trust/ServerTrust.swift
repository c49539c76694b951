import FoundationEssentials
import Glibc

/// A server's certificate chain for one connection, and what to evaluate it against (the
/// `SecTrust` analogue): handed to a server-trust challenge while the TLS handshake waits.
public struct ServerTrust: Sendable {
    /// The host the connection is for (DNS name or IP literal).
    public let host: String
    /// The port.
    public let port: Int
    /// The chain the server sent, leaf first.
    public let peerChain: [Certificate]
    /// True when the TLS session was resumed: the chain is the one stored with the session.
    public let isResumedSession: Bool
    /// The roots evaluation uses (the session's configured anchors, with or without the system's).
    public private(set) var trustRoots: TrustRoots
    /// The time to evaluate at; nil is now (`SecTrustSetVerifyDate`).
    public var validationDate: Date?
    /// Revocation lists every certificate of the chain is checked against (none: no check).
    public var revocationLists: [CertificateRevocationList] = []
    /// DER OCSP responses about the leaf (`SecTrustSetOCSPResponse`), checked by ``evaluate()``:
    /// a verified "revoked" fails the evaluation, and so does a response that cannot be trusted.
    /// Connections check the response a server staples in the handshake on their own (see
    /// ``TLSConfiguration/stapledOCSP``), whoever made the trust decision.
    public var ocspResponses: [Data] = []
    /// The certificate policies the chain must be valid for (RFC 5280 §6.1.1): from
    /// ``TLSConfiguration/certificatePolicies`` for a connection's trust; the default accepts any.
    public var certificatePolicies = CertificatePolicyRequirements()
    /// Whether the certificate's names are checked against ``host`` (an SSL policy with or
    /// without a host name).
    public var validatesHost = true

    /// The trust of a connection to `host` and `port` that presented `peerChain` (leaf first),
    /// judged under `trustRoots`.
    public init(host: String, port: Int, peerChain: [Certificate], isResumedSession: Bool, trustRoots: TrustRoots) {
        self.host = host
        self.port = port
        self.peerChain = peerChain
        self.isResumedSession = isResumedSession
        self.trustRoots = trustRoots
    }

    /// Evaluates ``peerChain`` for ``host`` (when ``validatesHost``) against ``trustRoots``, at
    /// ``validationDate``, with ``revocationLists``, ``ocspResponses`` and ``certificatePolicies``:
    /// the result carries every failure reason, the chain as sent and as validated, their pins and
    /// the valid policies.
    public func evaluate() -> TrustEvaluationResult {
        CertificateChainEvaluator.evaluate(
            chain: peerChain,
            roots: trustRoots,
            host: validatesHost ? host : nil,
            at: validationDate,
            crls: revocationLists,
            ocspResponses: ocspResponses,
            policies: certificatePolicies
        )
    }

    /// The same trust with other anchors (`SecTrustSetAnchorCertificates`): they replace the
    /// system roots, or with `addingSystemRoots` (`SecTrustSetAnchorCertificatesOnly(false)`) join them.
    public func settingAnchors(_ anchors: [Certificate], addingSystemRoots: Bool = false) -> ServerTrust {
        var copy = self
        copy.trustRoots = addingSystemRoots ? .system(adding: anchors) : .anchors(anchors)
        return copy
    }

    /// The same trust evaluated against `roots`.
    func settingRoots(_ roots: TrustRoots) -> ServerTrust {
        var copy = self
        copy.trustRoots = roots
        return copy
    }
}
