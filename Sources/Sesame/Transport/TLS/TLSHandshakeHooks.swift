import Foundation

/// The server's certificate chain, handed up while the handshake waits for a decision.
public struct ServerTrustRequest: Sendable {
    /// The host the connection is for (DNS name or IP literal).
    public let host: String
    /// The port.
    public let port: Int
    /// The chain the server sent, leaf first.
    public let peerChain: [Certificate]
    /// True when the session was resumed: the chain is the one stored with the session.
    public let isResumedSession: Bool
    /// The roots default handling evaluates against.
    public let trustRoots: TrustRoots

    /// Default evaluation: the chain against ``trustRoots`` for ``host``, now.
    public func evaluateWithDefaultPolicy() -> TrustEvaluationResult {
        CertificateChainEvaluator.evaluate(chain: peerChain, roots: trustRoots, host: host)
    }
}

/// A server's request for a client certificate, handed up while the handshake waits.
public struct ClientCertificateRequest: Sendable {
    /// The host the connection is for.
    public let host: String
    /// The port.
    public let port: Int
    /// The certificate authorities the server accepts (may be empty: any).
    public let acceptableIssuers: [DistinguishedName]
}

/// Asynchronous decisions a handshake suspends for.
///
/// Each closure is called on the Swift concurrency pool (never on the event loop), may take as long
/// as it likes (the handshake waits without using CPU, and other connections proceed), and must not
/// block a thread. `nil` means default handling: standard evaluation against the configuration's
/// trust roots, and no client certificate.
public struct TLSHandshakeHooks: Sendable {
    /// Decides whether to trust the server; `true` accepts.
    public var serverTrust: (@Sendable (ServerTrustRequest) async -> Bool)?
    /// Chooses a client identity; `nil` sends no certificate.
    public var clientCertificate: (@Sendable (ClientCertificateRequest) async -> Identity?)?

    public init(
        serverTrust: (@Sendable (ServerTrustRequest) async -> Bool)? = nil,
        clientCertificate: (@Sendable (ClientCertificateRequest) async -> Identity?)? = nil
    ) {
        self.serverTrust = serverTrust
        self.clientCertificate = clientCertificate
    }

    /// Default handling for both decisions.
    public static let `default` = TLSHandshakeHooks()
}
