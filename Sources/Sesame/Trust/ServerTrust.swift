import Foundation

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
    public let trustRoots: TrustRoots

    /// Evaluates ``peerChain`` against ``trustRoots`` for ``host``, now.
    public func evaluate() -> TrustEvaluationResult {
        CertificateChainEvaluator.evaluate(chain: peerChain, roots: trustRoots, host: host)
    }
}
