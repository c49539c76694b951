/// What a completed handshake agreed on.
public struct TLSConnectionInfo: Sendable, CustomStringConvertible {
    /// "TLSv1.2" or "TLSv1.3".
    public let protocolVersion: String
    /// The cipher suite's standard name.
    public let cipherSuite: String
    /// The ALPN protocol the server chose, if any.
    public let applicationProtocol: String?
    /// The server's chain, leaf first.
    public let peerChain: [Certificate]
    /// True when the session was resumed.
    public let isSessionReused: Bool
    /// The client certificate sent, if any.
    public let clientCertificate: Certificate?
    /// "127.0.0.1:443" or "[::1]:443".
    public let remoteAddress: String
    /// The evaluation default handling made, or nil when a ``TLSHandshakeHooks/serverTrust`` hook decided.
    public let trustEvaluation: TrustEvaluationResult?
    /// The leaf's status from the OCSP response the server stapled, when it sent one (never on a
    /// resumed session) and the configuration did not ignore it.
    public var stapledOCSPStatus: OCSPStatus? = nil

    public var description: String {
        "\(protocolVersion) \(cipherSuite)\(applicationProtocol.map { " ALPN \($0)" } ?? "")"
            + (isSessionReused ? " (resumed)" : "")
    }
}
