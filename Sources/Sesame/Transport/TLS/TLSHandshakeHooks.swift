import FoundationEssentials
import Glibc

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
/// block a thread. A closure that throws ends the handshake with its error (a cancelled
/// challenge). `nil` means default handling: standard evaluation against the configuration's
/// trust roots, and no client certificate.
public struct TLSHandshakeHooks: Sendable {
    /// Decides whether to trust the server; `true` accepts.
    public var serverTrust: (@Sendable (ServerTrust) async throws -> Bool)?
    /// Chooses a client identity; `nil` sends no certificate.
    public var clientCertificate: (@Sendable (ClientCertificateRequest) async throws -> Identity?)?
    /// The session's delegate chain for server trust, used when ``serverTrust`` is nil: `true` or
    /// `false` when a delegate decided, nil for default handling, which the connection then does
    /// itself as with no hook (with its evaluation cache, and the evaluation in its `tlsInfo`).
    var delegateTrust: (@Sendable (ServerTrust) async throws -> Bool?)?

    /// Hooks that decide server trust and choose a client identity; nil leaves the decision to the
    /// session.
    public init(
        serverTrust: (@Sendable (ServerTrust) async throws -> Bool)? = nil,
        clientCertificate: (@Sendable (ClientCertificateRequest) async throws -> Identity?)? = nil
    ) {
        self.serverTrust = serverTrust
        self.clientCertificate = clientCertificate
    }

    /// Default handling for both decisions.
    public static let `default` = TLSHandshakeHooks()
}
