import Foundation

extension Session {
    /// A credential for `space` found without asking: the request URL's user info, the storage's
    /// default (for the exact space, then for the realm under another password scheme, then one
    /// stored for any realm of the server), then `.netrc` when enabled.
    func automaticCredential(
        for space: ProtectionSpace,
        url: URL
    ) throws -> (Credential, ChallengeTrace.Responder)? {
        if !space.isProxy, let user = url.user(percentEncoded: false),
            let password = url.password(percentEncoded: false)
        {
            return (Credential(user: user, password: password, persistence: .forSession), .urlUserInfo)
        }
        if let storage = configuration.credentialStorage {
            var candidates = [space]
            if space.authenticationMethod.usesPassword {
                // A password serves every password scheme of its realm; one stored without a realm
                // serves every realm of its server.
                let methods = [space.authenticationMethod, .httpDigest, .httpBasic, .default]
                for realm in Set([space.realm, nil]).sorted(by: { ($0 == nil ? 1 : 0) < ($1 == nil ? 1 : 0) }) {
                    for method in methods {
                        let candidate = space.with(realm: realm, method: method)
                        if !candidates.contains(candidate) { candidates.append(candidate) }
                    }
                }
            }
            if let credential = try storage.defaultCredential(forFirstOf: candidates) { return (credential, .storage) }
        }
        if configuration.usesNetrc, !space.isProxy, space.authenticationMethod.usesPassword,
            let netrc = try Netrc.load(configuration.netrcFile ?? Netrc.defaultURL),
            let entry = netrc.entry(for: space.host), let login = entry.login, let password = entry.password
        {
            return (Credential(user: login, password: password, persistence: .forSession), .netrc)
        }
        return nil
    }

    enum ChallengeOutcome {
        case deliver
        case retry(ChallengeResolver.Attempt)
        case fail(SesameError)
    }

    /// Runs the resolver over a response: asks the delegates as often as it says, stores what
    /// worked, and tells the exchange loop whether to deliver, send again, or fail. With `proxy`,
    /// the response is the proxy's (407 and `Proxy-Authenticate`), and the proxy URL's credential
    /// is tried first.
    func resolveChallenges(
        _ response: HTTPResponse,
        to request: HTTPRequest,
        with resolver: inout ChallengeResolver,
        proxy: (endpoint: ProxyEndpoint, credential: Credential?)? = nil
    ) async throws -> ChallengeOutcome {
        let url = request.url
        let challenged = response.status == (proxy == nil ? 401 : 407)
        guard challenged else {
            // What was sent, if anything, was taken (a request sent with a credential already
            // known comes here every time): nothing to ask, only a new credential to keep.
            do {
                let step = try resolver.received(response, challenged: false, offers: [], automatic: { _ in nil })
                if case .deliver(let succeeded?) = step {
                    if let proxy {
                        rememberProxy(succeeded, for: proxy.endpoint)
                    } else {
                        remember(succeeded, for: url)
                    }
                }
            } catch {
                return .fail(error as? SesameError ?? SesameError(.credentialStoreFailed, "\(error)"))
            }
            reportTraces(&resolver)
            return .deliver
        }
        let automatic: ChallengeResolver.Automatic = { [self] space in
            if space.isProxy, let credential = proxy?.credential { return (credential, .urlUserInfo) }
            return try automaticCredential(for: space, url: url)
        }
        let methods = proxy == nil ? configuration.authenticationMethods : configuration.proxyAuthenticationMethods
        guard let origin = proxy?.endpoint.origin ?? Origin(url) else { return .deliver }
        let offered = OfferedProtectionSpaces.parse(response, origin: origin, isProxy: proxy != nil)
        let offers = offered.offers.filter { methods?.contains($0.space.authenticationMethod) ?? true }
        for problem in offered.problems { configuration.eventObserver?(.challengeHeaderProblem(problem)) }
        // A stronger scheme Sesame cannot answer means a downgrade: say so.
        for offer in offers where offer.digest != nil && !offer.isAnswerable {
            configuration.eventObserver?(
                .challengeHeaderProblem("\(offer.summary) is not supported (not answered; weaker schemes may be)")
            )
        }
        var step: ChallengeResolver.Step
        do {
            step = try resolver.received(response, challenged: challenged, offers: offers, automatic: automatic)
            if let failed = resolver.lastFailure, failed.responder == .preemptive {
                if let proxy { forgetProxy(proxy.endpoint) } else { preemptive.forget(failed.space) }
            }
            while case .ask(let challenge) = step {
                let (disposition, credential, responder) = await offLoop { await ask(challenge) }
                step = try resolver.answered(
                    disposition,
                    credential,
                    by: responder,
                    for: challenge,
                    automatic: automatic
                )
            }
        } catch {
            reportTraces(&resolver)
            return .fail(error as? SesameError ?? SesameError(.credentialStoreFailed, "\(error)"))
        }
        reportTraces(&resolver)
        switch step {
        case .deliver(let succeeded):
            if let succeeded {
                if let proxy { rememberProxy(succeeded, for: proxy.endpoint) } else { remember(succeeded, for: url) }
            }
            return .deliver
        case .retry(let attempt):
            return .retry(attempt)
        case .fail(let error):
            return .fail(error)
        case .ask:
            preconditionFailure("asked above")
        }
    }

    private func reportTraces(_ resolver: inout ChallengeResolver) {
        let traces = resolver.drainTraces()
        guard let observer = configuration.eventObserver else { return }
        for trace in traces { observer(.challenge(trace)) }
    }

    /// Asks the delegates about `challenge` (task delegate first, then the session's; the session's
    /// first for session-wide methods) and tells who answered.
    func ask(
        _ challenge: AuthenticationChallenge
    ) async -> (AuthChallengeDisposition, Credential?, ChallengeTrace.Responder) {
        let task = challenge.task
        let sessionWide = challenge.protectionSpace.authenticationMethod.isSessionWide
        // Who would answer after each forward by a default implementation, in order.
        let hasTaskDelegate = task?.delegate != nil && task?.delegate !== delegate
        var chain: [ChallengeTrace.Responder] = []
        if sessionWide {
            if delegate != nil { chain.append(.sessionDelegate) }
            if task != nil {
                if hasTaskDelegate { chain.append(.taskDelegate) }
                if delegate != nil { chain.append(.sessionDelegate) }
            }
        } else {
            if hasTaskDelegate { chain.append(.taskDelegate) }
            if delegate != nil { chain += [.sessionDelegate, .sessionDelegate] }
        }
        let answer: (AuthChallengeDisposition, Credential?)
        if sessionWide, let delegate {
            answer = await offLoop { await delegate.session(self, didReceive: challenge) }
        } else if let task, let first = task.delegate ?? delegate {
            answer = await offLoop { await first.session(self, task: task, didReceive: challenge) }
        } else {
            return (.performDefaultHandling, nil, .defaultHandling)
        }
        // The first answer counts, whether it came through the sender, the handler or the return.
        challenge.answer.resolve(answer.0, answer.1)
        let (disposition, credential) = await challenge.answer.value()
        let hops = challenge.forwardCount
        return (disposition, credential, hops < chain.count ? chain[hops] : .defaultHandling)
    }

    /// A credential worked: keep it per its persistence, and send it preemptively from now on.
    func remember(_ attempt: ChallengeResolver.Attempt, for url: URL) {
        guard attempt.responder != .preemptive else { return }
        preemptive.record(attempt, for: url)
        store(attempt)
    }

    /// Keeps a credential that worked in the credential storage, per its persistence.
    func store(_ attempt: ChallengeResolver.Attempt) {
        guard let storage = configuration.credentialStorage, attempt.credential.persistence != .none,
            attempt.responder != .storage
        else { return }
        do {
            let hasDefault = try storage.defaultCredential(for: attempt.space) != nil
            if hasDefault {
                try storage.set(attempt.credential, for: attempt.space)
            } else {
                try storage.setDefaultCredential(attempt.credential, for: attempt.space)
            }
        } catch {
            let failure = error as? SesameError ?? SesameError(.credentialStoreFailed, "\(error)")
            configuration.eventObserver?(.credentialNotStored(attempt.space, failure))
        }
    }

    /// Handshake hooks that turn TLS decisions into server-trust and client-certificate challenges
    /// for the session delegate.
    static func challengeHooks(for reference: SessionReference) -> TLSHandshakeHooks {
        TLSHandshakeHooks(
            serverTrust: { trust in
                guard let session = reference.session else { return false }
                return try await session.decideTrust(trust)
            },
            clientCertificate: { request in
                guard let session = reference.session else { return nil }
                return try await session.chooseIdentity(request)
            }
        )
    }

    private func decideTrust(_ trust: ServerTrust) async throws -> Bool {
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
        let (disposition, credential) = try await handshakeChallenge(space)
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
    /// space in this session, else the delegate's answer, else (default handling) the identity
    /// configured for the host. The first choice for a space holds for the whole session (in
    /// memory only), so pooled connections to one server never mix identities.
    func chooseIdentity(_ request: ClientCertificateRequest) async throws -> Identity? {
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
        if delegate != nil {
            let (disposition, credential) = try await handshakeChallenge(space)
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

    private func handshakeChallenge(_ space: ProtectionSpace) async throws -> (AuthChallengeDisposition, Credential?) {
        let challenge = AuthenticationChallenge(
            protectionSpace: space,
            proposedCredential: nil,
            previousFailureCount: 0,
            failureResponse: nil,
            error: nil,
            task: nil
        )
        let (disposition, credential, responder) = await ask(challenge)
        if let observer = configuration.eventObserver {
            let trace = ChallengeTrace(
                protectionSpace: space,
                previousFailureCount: 0,
                responder: responder,
                disposition: disposition,
                user: nil
            )
            loop.execute { observer(.challenge(trace)) }
        }
        return (disposition, credential)
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
