import FoundationEssentials
import Glibc

extension Session {
    /// The handshake hooks for a connection `task`'s driver opens in `opening`: the
    /// configuration's own, and where it has none and a delegate may answer, challenges asked of
    /// the driver, whose state machine walks the task's delegate chain.
    func handshakeHooks(for task: SessionTask, asking opening: ConnectionOpening) -> TLSHandshakeHooks {
        guard delegate != nil || task.delegate != nil else { return delegatelessHooks }
        var hooks = configuration.handshakeHooks
        let asker = HandshakeAsker(opening)
        let reference = self.reference
        if hooks.serverTrust == nil {
            hooks.delegateTrust = { trust in
                guard let session = reference.session else { return false }
                return try await session.decideTrust(trust, asking: asker)
            }
        }
        hooks.clientCertificate =
            hooks.clientCertificate ?? { request in
                guard let session = reference.session else { return nil }
                return try await session.chooseIdentity(request, asking: asker)
            }
        return hooks
    }

    /// The delegates' decision about a server's trust; nil for the connection's own default handling.
    private func decideTrust(_ trust: ServerTrust, asking asker: HandshakeAsker) async throws -> Bool? {
        let space = ProtectionSpace(
            host: trust.host,
            port: trust.port,
            protocol: "https",
            realm: nil,
            authenticationMethod: .serverTrust,
            isProxy: false,
            proxyType: nil,
            serverTrust: trust
        )
        let (disposition, credential) = await asker.ask(space)
        switch disposition {
        case .useCredential:
            guard let credential else { return false }
            guard let accepted = credential.serverTrust else {
                throw SesameError(
                    .unsupportedCredential,
                    "the server-trust challenge for \(trust.host) was answered with \(credential); answer it with Credential(trust:) or .performDefaultHandling"
                )
            }
            // Accept only the trust this handshake presented.
            return accepted.peerChain == trust.peerChain
        case .performDefaultHandling, .rejectProtectionSpace:
            guard configuration.serverTrustManager != nil || configuration.securityPolicy != nil else { return nil }
            return try Self.defaultTrustDecision(trust, configuration)
        case .cancelAuthenticationChallenge:
            throw SesameError(.authenticationCancelled, "the server-trust challenge for \(trust.host) was cancelled")
        }
    }

    /// Default handling of a server trust: the host's evaluator in the trust manager, else the
    /// security policy, else standard evaluation. Throws the refusal with its reasons.
    static func defaultTrustDecision(_ trust: ServerTrust, _ configuration: SessionConfiguration) throws -> Bool {
        let host = trust.host
        if let manager = configuration.serverTrustManager,
            let evaluator = try manager.serverTrustEvaluator(forHost: host)
        {
            try evaluator.evaluate(trust, forHost: host)
        } else if let policy = configuration.securityPolicy {
            try policy.evaluate(trust, forHost: host)
        } else {
            try trust.evaluate().requireTrusted("\(host):\(trust.port)")
        }
        return true
    }

    /// The identity for a client-certificate request: the one already chosen for its protection
    /// space in this session, else the delegates' answer (asked of the driver through `asker`),
    /// else (default handling) the identity
    /// configured for the host. The first choice for a space holds for the whole session (in
    /// memory only), so pooled connections to one server never mix identities.
    func chooseIdentity(
        _ request: ClientCertificateRequest,
        asking asker: HandshakeAsker? = nil
    ) async throws -> Identity? {
        let space = ProtectionSpace(
            host: request.host,
            port: request.port,
            protocol: "https",
            realm: nil,
            authenticationMethod: .clientCertificate,
            isProxy: false,
            proxyType: nil,
            distinguishedNames: request.acceptableIssuers
        )
        if let remembered = chosenIdentities.withLock({ $0[space] }) {
            reportIdentity(remembered, for: space, responder: .remembered)
            return remembered
        }
        var chosen: Identity?
        if let asker {
            let (disposition, credential) = await asker.ask(space)
            switch disposition {
            case .useCredential:
                guard let credential else { break }
                guard let identity = credential.identity else {
                    throw SesameError(
                        .unsupportedCredential,
                        "the client-certificate challenge for \(request.host) was answered with \(credential); answer it with Credential(identity:certificates:persistence:)"
                    )
                }
                // As with NSURLCredential, `certificates` are the intermediates sent after the leaf.
                chosen =
                    credential.certificates.isEmpty
                    ? identity
                    : try Identity(
                        certificate: identity.certificate,
                        intermediates: credential.certificates,
                        privateKey: identity.privateKey,
                        source: "the client-certificate credential"
                    )
            case .performDefaultHandling, .rejectProtectionSpace:
                chosen = configuredIdentity(forHost: request.host)
            case .cancelAuthenticationChallenge:
                throw SesameError(
                    .authenticationCancelled,
                    "the client-certificate challenge for \(request.host) was cancelled"
                )
            }
        } else {
            chosen = configuredIdentity(forHost: request.host)
            reportIdentity(chosen, for: space, responder: .defaultHandling)
        }
        return chosenIdentities.withLock { identities in
            if let first = identities[space] { return first }  // a concurrent handshake chose first
            identities[space] = chosen
            return chosen
        }
    }

    /// ``SessionConfiguration/clientIdentities``' entry for `host`: exact, then the longest
    /// matching `*.suffix`, then `*`.
    func configuredIdentity(forHost host: String) -> Identity? {
        let host = host.lowercased()
        let identities = configuration.clientIdentities
        if let exact = identities.first(where: { $0.key.lowercased() == host }) { return exact.value }
        let wildcard = identities.filter { key, _ in
            key.hasPrefix("*.") && host.hasSuffix(String(key.lowercased().dropFirst()))
        }.max { $0.key.count < $1.key.count }
        return wildcard?.value ?? identities["*"]
    }

    private func reportIdentity(_ identity: Identity?, for space: ProtectionSpace, responder: ChallengeTrace.Responder)
    {
        guard let observer = configuration.eventObserver else { return }
        let trace = ChallengeTrace(
            protectionSpace: space,
            previousFailureCount: 0,
            responder: responder,
            disposition: identity == nil ? .performDefaultHandling : .useCredential,
            user: nil,
            detail: identity.map { "certificate \($0.certificate.subject)" } ?? "no certificate"
        )
        loop.execute { observer(.challenge(trace)) }
    }
}

/// A weak reference to a session, for closures made before the session exists (its handshake
/// hooks).
final class SessionReference: Sendable {
    private let reference = LockedValue<WeakSession>(WeakSession())

    private struct WeakSession {
        weak var session: Session?
    }

    var session: Session? { reference.withLock { $0.session } }
    func set(_ session: Session) { reference.withLock { $0.session = session } }
}

/// What a connection's handshake hooks ask the driver that opens it, held weakly: a pooled
/// connection keeps its hooks, and must not keep the step that opened it. A question after the
/// step ended is cancelled.
final class HandshakeAsker: Sendable {
    private let reference: LockedValue<WeakOpening>

    private struct WeakOpening {
        weak var opening: ConnectionOpening?
    }

    init(_ opening: ConnectionOpening) { reference = LockedValue(WeakOpening(opening: opening)) }

    func ask(_ space: ProtectionSpace) async -> ConnectionOpening.Answer {
        guard let opening = reference.withLock({ $0.opening }) else { return (.cancelAuthenticationChallenge, nil) }
        return await opening.ask(space)
    }
}
