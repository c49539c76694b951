import FoundationEssentials
import Glibc

/// One task's journey from its first request to its final response, as a value-type state
/// machine (the shape of async-http-client's `HTTPRequestStateMachine` and `RedirectState`): events
/// in, actions out, no I/O. The session's driver (`Session+Run.swift`) performs each action and
/// feeds back what came of it.
///
/// It owns the current request (it changes on redirects), the two parties that can challenge it
/// (one ``AuthHop`` for the origin and one for a forwarding proxy), the redirect count, and the
/// Digest `Authentication-Info` check. An event that cannot happen in the current state is a bug
/// in the driver: it stops in debug builds, and fails the task with ``SesameError/Code/internalError``
/// otherwise.
struct TaskStateMachine {
    /// What the driver does next.
    enum Action {
        /// Find the route of ``request`` and what the session already knows for it; answer with
        /// ``routed(_:)``.
        case route
        /// Send this request (the one on the wire, headers added) over what the pool gives;
        /// answer with ``responseHead(_:)``, ``sendFailed(_:)`` or ``failed(_:)``. When the pool
        /// gives the slot to open a connection through a tunnel, answer with
        /// ``tunnelNeeded(known:)``.
        case send(Exchange)
        /// Send `CONNECT` to the proxy, on the connection its last refusal kept open, else on a
        /// new one; answer with ``tunnelAnswered(_:)`` or ``failed(_:)``.
        case connectTunnel(TunnelRequest)
        /// The proxy opened the tunnel: start TLS to the origin inside it, give the connection to
        /// the pool, and send the request over it; answer as for ``send(_:)``.
        case sendInTunnel(Exchange)
        /// Find a credential without asking; answer with ``credentialFound(_:)`` or ``failed(_:)``.
        case lookUpCredential(ProtectionSpace)
        /// Call one delegate method about the challenge; answer with ``challengeAnswered(_:)``.
        case ask(DelegateChain.Entry, AuthenticationChallenge)
        /// Give the handshake that asked ``handshakeChallenged(_:)`` this answer, and go on
        /// waiting for the connection being opened (the machine is back where it was).
        case answerHandshake(AuthChallengeDisposition, Credential?)
        /// Run the exchange's next step (Negotiate, NTLM) with the server's token on a
        /// blocking-work thread; answer with ``contextEstablished(_:)``.
        case establish(any SecurityExchange, input: [UInt8]?)
        /// The Bearer token sent was refused: get a token other than this one from the session's
        /// token source; answer with ``tokenRefreshed()`` or ``failed(_:)``.
        case refreshToken(rejecting: IssuedToken)
        /// Ask the delegates whether to follow this redirect; answer with ``redirectDecided(_:)``.
        case decideRedirect(HTTPResponse, proposed: HTTPRequest)
        /// The redirect is followed with this request: drop the last response's body, make it the
        /// task's current request, then route it (answer with ``routed(_:)``).
        case followRedirect(HTTPRequest)
        /// The final response: give it to the task and stream its body through the check, if any;
        /// answer with ``bodyFinished()`` or ``failed(_:)``.
        case deliver(HTTPResponse, DigestBodyCheck?)
        /// Done: the task succeeded with this response.
        case complete(HTTPResponse)
        /// Done: the task fails with this error.
        case fail(any Error)
    }

    /// One request as it goes on the wire.
    struct Exchange: Sendable {
        let request: HTTPRequest
        let origin: Origin
        let target: String
        let route: ProxyRoute
        /// Over HTTP/1.1 only: the server asked for it on an HTTP/2 stream.
        var http1Only = false
        /// The HTTP/2 connection that last left the request unprocessed, to pass over when the
        /// origin has another (held, so that no new connection can take its identity).
        var avoiding: (any AnyObject & Sendable)?
        /// The origin with the route, as the pool keys its connections.
        var routedOrigin: Origin {
            var routed = origin
            routed.route = route
            return routed
        }
        /// The forwarding proxy the request goes through, if any.
        var forwardProxy: ProxyEndpoint? {
            if case .forward(let proxy) = route { return proxy }
            return nil
        }
    }

    /// One `CONNECT` as it goes to the proxy.
    struct TunnelRequest: Sendable {
        let proxy: ProxyEndpoint
        /// The origin's `host:port`, the request target.
        let authority: String
        let proxyAuthorization: String?
    }

    /// Why a request sent got no answer, where sending it again on another connection may get
    /// one.
    enum SendFailure: Error {
        /// A kept-alive HTTP/1.1 connection proved closed before any of the answer came: the
        /// server may have acted on the request.
        case staleConnection(SesameError)
        /// An HTTP/2 stream ended without the server processing it (or, when not
        /// `certain`, without any of the answer); `reused`: its connection had carried streams
        /// before.
        case unprocessed(HTTP2Exchange.Unprocessed, connection: any AnyObject & Sendable, reused: Bool)
    }

    /// How often one exchange is sent again after an HTTP/2 connection left it unprocessed.
    static let maximumUnprocessedSends = 3

    /// What the driver found out for the next request.
    struct Routing: Sendable {
        var route: ProxyRoute
        /// The credential in the forwarding proxy's URL.
        var proxyCredential: Credential?
        /// The credential the session keeps for the forwarding proxy (looked up when
        /// ``TaskStateMachine/wantsKnownAttempt(forProxy:)`` says so).
        var knownProxyAttempt: ChallengeResolver.Attempt?
        /// The credential to send preemptively to the origin (looked up when
        /// ``TaskStateMachine/wantsPreemptiveAttempt`` says so).
        var preemptive: ChallengeResolver.Attempt?
        /// The session's Bearer token for the origin (looked up when
        /// ``TaskStateMachine/wantsBearerToken`` says so).
        var bearerToken: IssuedToken?
    }

    /// The configuration's choices for a task.
    struct Settings: Sendable {
        var followsRedirects: Bool
        var maximumRedirects: Int
        var origin: AuthHop.Settings
        var proxy: AuthHop.Settings
        var bearer: BearerAuthentication?

        init(_ configuration: SessionConfiguration) {
            followsRedirects = configuration.followsRedirects
            maximumRedirects = configuration.maximumRedirects
            let hop = AuthHop.Settings(
                maximumFailures: configuration.maximumAuthenticationFailures,
                maximumRoundTrips: configuration.maximumChallengeRoundTrips,
                allowsCleartextPasswords: configuration.allowsCleartextPasswords,
                recordsTraces: configuration.eventObserver != nil,
                methods: configuration.authenticationMethods,
                negotiate: configuration.negotiate
            )
            origin = hop
            proxy = hop
            proxy.methods = configuration.proxyAuthenticationMethods
            bearer = configuration.bearerAuthentication
        }
    }

    /// The tunnel being opened for the exchange on the wire.
    private struct Tunnel: Sendable {
        let proxy: ProxyEndpoint
        let authority: String
        let connect: HTTPRequest
        /// The origin's Digest expectation for the request the tunnel is for.
        let expectation: DigestAuthorizer.Expectation?
        var rounds = 0
    }

    /// Who answered, and whose authentication state a challenge is resolved with.
    private enum Challenger: Sendable, Equatable {
        case origin
        /// A forwarding proxy.
        case proxy
        /// The proxy of the tunnel being opened.
        case tunnel
    }

    /// A response head and what it arrived for.
    private struct Received: Sendable {
        let response: HTTPResponse
        let forwardProxy: ProxyEndpoint?
        let expectation: DigestAuthorizer.Expectation?
        /// The tunnel whose `CONNECT` this answers, if any.
        var tunnel: Tunnel?
        /// A 407 from the forwarding proxy: the origin never saw the request.
        var proxyChallenged: Bool { forwardProxy != nil && response.status == 407 }
    }

    /// A connection-level challenge a handshake raised, being asked along the delegate chain.
    private struct HandshakeQuestion {
        var walk: DelegateWalk
        var entry: DelegateChain.Entry?
        let challenge: AuthenticationChallenge
    }

    private enum State {
        case idle
        case routing
        case waitingForHead(forwardProxy: ProxyEndpoint?, expectation: DigestAuthorizer.Expectation?)
        case tunnelling(Tunnel)
        /// A handshake of the connection being opened waits for the delegates' answer; then the
        /// machine resumes `resume`.
        indirect case askingHandshake(HandshakeQuestion, resume: State)
        case resolving(Challenger, Received)
        case establishing(Challenger, Received)
        case refreshingToken
        case decidingRedirect(Received, DigestBodyCheck?)
        case delivering(HTTPResponse)
        case finished
    }

    /// The request being made now (the original one until a redirect changes it).
    private(set) var request: HTTPRequest
    private(set) var origin: Origin
    private var target: String
    private let settings: Settings
    private var redirects = 0
    private var state = State.idle
    private var originHop: AuthHop
    private var proxyHop: AuthHop
    /// The party of the tunnel being opened: a new one for each tunnel, as each goes on a
    /// connection of its own.
    private var tunnelHop: AuthHop?
    /// What a tunnel's party is made with: the task and its delegates, and the credential in the
    /// proxy's URL for the current route.
    private let task: SessionTask?
    private let delegates: (task: Bool, session: Bool)
    private var tunnelProxyCredential: Credential?
    private var effects: [TaskEffect] = []
    /// The Bearer token the request on the wire carries, if any.
    private var sentToken: IssuedToken?
    /// Whether the task has had its one token refresh.
    private var refreshedToken = false
    /// The exchange on the wire, and how often it was sent again.
    private var sending: Exchange?
    private var resends = (stale: 0, unprocessed: 0)

    /// - Parameters:
    ///   - request: the task's request, whose URL is an absolute http or https URL at `origin`.
    ///   - target: the request's origin-form target (path and query).
    ///   - hasTaskDelegate: the task has a delegate of its own (not the session's).
    init(
        request: HTTPRequest,
        origin: Origin,
        target: String,
        settings: Settings,
        task: SessionTask?,
        hasTaskDelegate: Bool,
        hasSessionDelegate: Bool
    ) {
        self.request = request
        self.origin = origin
        self.target = target
        self.settings = settings
        self.task = task
        delegates = (hasTaskDelegate, hasSessionDelegate)
        originHop = AuthHop(
            .origin,
            settings: settings.origin,
            task: task,
            consentURL: request.url,
            hasTaskDelegate: hasTaskDelegate,
            hasSessionDelegate: hasSessionDelegate
        )
        proxyHop = AuthHop(
            .proxy,
            settings: settings.proxy,
            task: task,
            hasTaskDelegate: hasTaskDelegate,
            hasSessionDelegate: hasSessionDelegate
        )
    }

    /// Whether the driver should look for a credential to send the origin preemptively: none goes
    /// out yet, and the request carries no `Authorization` of its own.
    var wantsPreemptiveAttempt: Bool { originHop.wantsKnownAttempt && !request.headers.contains("Authorization") }

    /// Whether the driver should get the session's Bearer token: the origin is one the token goes
    /// to, and the request carries no `Authorization` of its own.
    var wantsBearerToken: Bool {
        settings.bearer?.covers(origin) == true && !request.headers.contains("Authorization")
    }

    /// Whether the driver should look for the credential the session keeps for `proxy`.
    func wantsKnownAttempt(forProxy proxy: ProxyEndpoint) -> Bool { proxyHop.wantsKnownAttempt(forProxy: proxy) }

    // MARK: - Events

    mutating func start() -> Action {
        guard case .idle = state else { return impossible("start") }
        state = .routing
        return .route
    }

    mutating func routed(_ routing: Routing) -> Action {
        guard case .routing = state else { return impossible("routed") }
        var wire = request
        var forwardProxy: ProxyEndpoint?
        do {
            if case .forward(let proxy) = routing.route {
                forwardProxy = proxy
                let known = routing.knownProxyAttempt
                proxyHop.route(through: proxy, credential: routing.proxyCredential, known: known)
                let uri = RequestHead.requestTarget(of: request.url, route: routing.route, originForm: target)
                if let (value, _) = try proxyHop.authorization(for: request, uri: uri) {
                    wire.headers.replaceOrAdd(name: "Proxy-Authorization", value: value)
                }
            } else {
                // Proxy credentials go only to a forwarding proxy, never to an origin or into a tunnel.
                wire.headers.remove(name: "Proxy-Authorization")
            }
            tunnelProxyCredential = routing.proxyCredential
            if let known = routing.preemptive, wantsPreemptiveAttempt { originHop.sending(preemptive: known) }
            var expectation: DigestAuthorizer.Expectation?
            if let (value, expected) = try originHop.authorization(for: request, uri: target) {
                wire.headers.replaceOrAdd(name: "Authorization", value: value)
                expectation = expected
            }
            sentToken = nil
            if let token = routing.bearerToken, wantsBearerToken, !wire.headers.contains("Authorization") {
                wire.headers.add(name: "Authorization", value: "Bearer " + token.value)
                sentToken = token
            }
            state = .waitingForHead(forwardProxy: forwardProxy, expectation: expectation)
        } catch {
            return fail(error)
        }
        let exchange = Exchange(request: wire, origin: origin, target: target, route: routing.route)
        sending = exchange
        resends = (0, 0)
        return .send(exchange)
    }

    /// The exchange got no answer for a reason sending it again may cure: it is sent again when
    /// the server cannot have acted on it (or the request is idempotent) and its body can be
    /// sent again, once after a stale HTTP/1.1 connection and up to
    /// ``maximumUnprocessedSends`` times after HTTP/2 ones; else the task fails.
    mutating func sendFailed(_ failure: SendFailure) -> Action {
        guard case .waitingForHead = state, var exchange = sending else { return impossible("sendFailed") }
        let replayable = exchange.request.body?.isReplayable ?? true
        switch failure {
        case .staleConnection(let error):
            resends.stale += 1
            guard resends.stale == 1, exchange.request.isIdempotent, replayable else { return fail(error) }
        case .unprocessed(let unprocessed, let connection, let reused):
            resends.unprocessed += 1
            // A connection that closed may have carried the request to the server; GOAWAY and the
            // stream errors say it did not.
            let mayResend = unprocessed.certain || (reused && exchange.request.isIdempotent)
            guard resends.unprocessed <= Self.maximumUnprocessedSends, replayable, mayResend else {
                return fail(unprocessed.underlying)
            }
            exchange.avoiding = connection
            if unprocessed.requiresHTTP1 { exchange.http1Only = true }
        }
        sending = exchange
        return .send(exchange)
    }

    /// The pool gave the slot to open a connection for the exchange, whose route is a tunnel:
    /// `CONNECT` goes to the proxy first, with `known` (the credential the session keeps for the
    /// proxy) or the one in the proxy's URL, and its 407s are answered like an origin's 401s.
    mutating func tunnelNeeded(known: ChallengeResolver.Attempt?) -> Action {
        guard case .waitingForHead(nil, let expectation) = state, let exchange = sending,
            case .tunnel(let proxy) = exchange.route
        else { return impossible("tunnelNeeded") }
        // CONNECT's authority form always names the port (RFC 9110 9.3.6), also for an IPv6 host
        // on the scheme's default port.
        let host = exchange.origin.host
        let authority = "\(host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host):\(exchange.origin.port)"
        guard let url = URL(string: "https://\(authority)/") else {
            return fail(SesameError(.invalidArgument, "'\(authority)' cannot be the target of a CONNECT request"))
        }
        var connect = HTTPRequest(url: url)
        connect.method = "CONNECT"
        var hop = AuthHop(
            .proxy,
            settings: settings.proxy,
            task: task,
            hasTaskDelegate: delegates.task,
            hasSessionDelegate: delegates.session
        )
        hop.route(through: proxy, credential: tunnelProxyCredential, known: known)
        tunnelHop = hop
        return connectTunnel(Tunnel(proxy: proxy, authority: authority, connect: connect, expectation: expectation))
    }

    /// The proxy's answer to ``Action/connectTunnel(_:)``.
    mutating func tunnelAnswered(_ response: HTTPResponse) -> Action {
        guard case .tunnelling(let tunnel) = state, tunnelHop != nil else { return impossible("tunnelAnswered") }
        var received = Received(response: response, forwardProxy: nil, expectation: nil)
        received.tunnel = tunnel
        state = .resolving(.tunnel, received)
        let challenged = response.status == 407
        let step = withHop(.tunnel) {
            $0.received(response, challenged: challenged, to: tunnel.connect, origin: tunnel.proxy.origin)
        }
        return proceed(step, .tunnel, received)
    }

    /// A handshake of the connection being opened for the exchange (to the origin, or to an
    /// HTTPS proxy) raised a connection-level challenge: server trust or a client certificate.
    /// It is asked along the delegate chain of connection-level challenges, then answered with
    /// ``Action/answerHandshake(_:_:)``.
    mutating func handshakeChallenged(_ space: ProtectionSpace) -> Action {
        switch state {
        case .waitingForHead, .tunnelling: break
        default: return impossible("handshakeChallenged")
        }
        let challenge = AuthenticationChallenge(
            protectionSpace: space,
            proposedCredential: nil,
            previousFailureCount: 0,
            failureResponse: nil,
            error: nil,
            task: task
        )
        let chain = DelegateChain.route(
            space.authenticationMethod,
            hasTask: task != nil,
            hasTaskDelegate: delegates.task,
            hasSessionDelegate: delegates.session
        )
        return nextHandshakeQuestion(HandshakeQuestion(walk: DelegateWalk(chain), challenge: challenge), resume: state)
    }

    mutating func responseHead(_ response: HTTPResponse) -> Action {
        guard case .waitingForHead(let forwardProxy, let expectation) = state else {
            return impossible("responseHead")
        }
        let received = Received(response: response, forwardProxy: forwardProxy, expectation: expectation)
        sending = nil  // answered: no resend, and the connection it avoided is not kept alive
        // The proxy's answer first: a 407 is its challenge; anything else means it took what was sent.
        if let forwardProxy, received.proxyChallenged || proxyHop.attempt != nil {
            state = .resolving(.proxy, received)
            let step = proxyHop.received(
                response,
                challenged: received.proxyChallenged,
                to: request,
                origin: forwardProxy.origin
            )
            return proceed(step, .proxy, received)
        }
        return askOrigin(received)
    }

    mutating func credentialFound(_ found: (Credential, ChallengeTrace.Responder)?) -> Action {
        guard case .resolving(let party, let received) = state else { return impossible("credentialFound") }
        let url = request.url
        return proceed(withHop(party) { $0.credentialFound(found, url: url) }, party, received)
    }

    mutating func challengeAnswered(_ answer: DelegateAnswer) -> Action {
        if case .askingHandshake(let question, let resume) = state {
            switch answer {
            case .methodMissing: return nextHandshakeQuestion(question, resume: resume)
            case .answered(let disposition, let credential):
                return handshakeAnswered(
                    disposition,
                    credential,
                    by: question.entry,
                    question.challenge,
                    resume: resume
                )
            }
        }
        guard case .resolving(let party, let received) = state else { return impossible("challengeAnswered") }
        let url = request.url
        return proceed(withHop(party) { $0.answered(answer, url: url) }, party, received)
    }

    /// The outcome of the exchange step ``Action/establish(_:input:)`` asked for.
    mutating func contextEstablished(_ outcome: Result<Void, SesameError>) -> Action {
        guard case .establishing(let party, let received) = state else { return impossible("contextEstablished") }
        state = .resolving(party, received)
        let url = request.url
        return proceed(withHop(party) { $0.contextEstablished(outcome, url: url) }, party, received)
    }

    /// A token other than the refused one is ready at the session's token source: the request
    /// goes again.
    mutating func tokenRefreshed() -> Action {
        guard case .refreshingToken = state else { return impossible("tokenRefreshed") }
        state = .routing
        return .route
    }

    /// The delegates' answer to ``Action/decideRedirect(_:proposed:)``: the request to follow, or
    /// nil to deliver the redirect response itself.
    mutating func redirectDecided(_ decided: HTTPRequest?) -> Action {
        guard case .decidingRedirect(let received, let check) = state else { return impossible("redirectDecided") }
        guard let decided else {
            state = .delivering(received.response)
            return .deliver(received.response, check)
        }
        redirects += 1
        guard redirects <= settings.maximumRedirects else {
            return fail(
                SesameError(
                    .tooManyRedirects,
                    "more than \(settings.maximumRedirects) redirects, the last to \(decided.url.redactedDescription)"
                )
            )
        }
        guard let next = Origin(decided.url) else {
            return fail(
                SesameError(
                    .unsupportedURL,
                    "'\(decided.url.redactedDescription)' is not an absolute http or https URL"
                )
            )
        }
        var followed = decided
        // Credentials never go along to another origin, even when a delegate put them back.
        if next != origin {
            for name in RedirectPolicy.originBoundHeaders { followed.headers.remove(name: name) }
        }
        (request, origin, target) = (followed, next, RequestHead.target(of: followed.url))
        effects.append(.redirected(status: received.response.status, to: followed.url))
        state = .routing
        return .followRedirect(followed)
    }

    mutating func bodyFinished() -> Action {
        guard case .delivering(let response) = state else { return impossible("bodyFinished") }
        state = .finished
        return .complete(response)
    }

    /// Anything the driver was doing failed (the send, a look-up, the body, the delegate's
    /// cancellation): the task ends with `error`.
    mutating func failed(_ error: any Error) -> Action {
        if case .finished = state { return impossible("failed") }
        return fail(error)
    }

    /// Removes and returns what the driver must do besides the next action, in order.
    mutating func takeEffects() -> [TaskEffect] {
        var all = tunnelHop?.takeEffects() ?? []
        all += proxyHop.takeEffects()
        all += originHop.takeEffects()
        guard !effects.isEmpty else { return all }
        defer { effects = [] }
        return all + effects
    }

    // MARK: - Transitions

    private mutating func askOrigin(_ received: Received) -> Action {
        let challenged = received.response.status == 401
        if challenged, !received.proxyChallenged, let rejected = sentToken, let bearer = settings.bearer,
            bearer.authenticator.isTokenFailure(received.response)
        {
            // One refresh per task: a server that refuses every token gets its 401 delivered.
            if !refreshedToken, request.body?.isReplayable ?? true {
                refreshedToken = true
                state = .refreshingToken
                return .refreshToken(rejecting: rejected)
            }
            if !refreshedToken {
                effects.append(.problem("a streamed body cannot be sent again with a new token; the 401 is delivered"))
            }
            return settled(received)
        }
        // Most responses neither challenge nor answer a credential just sent: nothing to resolve.
        guard !received.proxyChallenged, challenged || originHop.attempt != nil else { return settled(received) }
        state = .resolving(.origin, received)
        let step = originHop.received(received.response, challenged: challenged, to: request, origin: origin)
        return proceed(step, .origin, received)
    }

    private mutating func proceed(_ step: AuthHop.Step, _ party: Challenger, _ received: Received) -> Action {
        if let tunnel = received.tunnel, step.isFinal { return tunnelSettled(step, tunnel, received.response) }
        switch step {
        case .lookUpCredential(let space):
            return .lookUpCredential(space)
        case .ask(let entry, let challenge):
            return .ask(entry, challenge)
        case .establish(let context, let input):
            state = .establishing(party, received)
            return .establish(context, input: input)
        case .fail(let error):
            return fail(error)
        case .retry where request.body?.isReplayable ?? true:
            state = .routing
            return .route
        case .retry:
            // A streamed body is gone once sent: the challenge response is the answer.
            let status = received.response.status
            effects.append(
                .problem("a streamed body cannot be sent again with credentials; the \(status) is delivered")
            )
            return settled(received)
        case .deliver where party == .proxy && !received.proxyChallenged:
            proxyHop.clearAttempt()
            return askOrigin(received)
        case .deliver:
            return settled(received)
        }
    }

    /// The next delegate method to ask about a handshake's challenge, or default handling when
    /// none is left.
    private mutating func nextHandshakeQuestion(_ question: HandshakeQuestion, resume: State) -> Action {
        var question = question
        guard let entry = question.walk.next() else {
            return handshakeAnswered(.performDefaultHandling, nil, by: nil, question.challenge, resume: resume)
        }
        question.entry = entry
        state = .askingHandshake(question, resume: resume)
        return .ask(entry, question.challenge)
    }

    private mutating func handshakeAnswered(
        _ disposition: AuthChallengeDisposition,
        _ credential: Credential?,
        by entry: DelegateChain.Entry?,
        _ challenge: AuthenticationChallenge,
        resume: State
    ) -> Action {
        if settings.origin.recordsTraces {
            let trace = ChallengeTrace(
                protectionSpace: challenge.protectionSpace,
                previousFailureCount: 0,
                responder: entry?.responder ?? .defaultHandling,
                disposition: disposition,
                user: nil,
                delegateMethod: entry?.method
            )
            effects.append(.trace(trace))
        }
        state = resume
        return .answerHandshake(disposition, credential)
    }

    /// The tunnel's party has its answer: `CONNECT` again, or the tunnel is open (a 2xx), or the
    /// proxy refused it for good.
    private mutating func tunnelSettled(_ step: AuthHop.Step, _ tunnel: Tunnel, _ response: HTTPResponse) -> Action {
        switch step {
        case .retry:
            return connectTunnel(tunnel)
        case .fail(let error):
            return fail(error)
        default:
            let credentialSent = tunnelHop?.attempt != nil
            guard (200..<300).contains(response.status), let exchange = sending else {
                return fail(Self.tunnelRefusal(response, tunnel, credentialSent: credentialSent))
            }
            state = .waitingForHead(forwardProxy: nil, expectation: tunnel.expectation)
            return .sendInTunnel(exchange)
        }
    }

    /// The next `CONNECT` of `tunnel`, with the credential its party sends; bounded, though the
    /// party's failure limit ends the exchange long before.
    private mutating func connectTunnel(_ tunnel: Tunnel) -> Action {
        var tunnel = tunnel
        tunnel.rounds += 1
        guard tunnel.rounds <= 2 * settings.proxy.maximumFailures + 8 else {
            return fail(
                SesameError(
                    .proxyAuthenticationFailed,
                    "\(tunnel.proxy) kept answering CONNECT to \(tunnel.authority) with 407"
                )
            )
        }
        let authorization: String?
        do {
            authorization = try tunnelHop?.authorization(for: tunnel.connect, uri: tunnel.authority)?.0
        } catch {
            return fail(error)
        }
        state = .tunnelling(tunnel)
        return .connectTunnel(
            TunnelRequest(proxy: tunnel.proxy, authority: tunnel.authority, proxyAuthorization: authorization)
        )
    }

    /// The error for a `CONNECT` the proxy refused for good.
    private static func tunnelRefusal(_ response: HTTPResponse, _ tunnel: Tunnel, credentialSent: Bool) -> SesameError {
        let (proxy, authority) = (tunnel.proxy, tunnel.authority)
        guard response.status == 407 else {
            return SesameError(
                .proxyConnectFailed,
                "\(proxy) refused to CONNECT to \(authority): \(response.status) \(response.reason)"
            )
        }
        let what = credentialSent ? "and refused the credentials sent" : "and no credential for it was available"
        return SesameError(
            .proxyAuthenticationFailed,
            "\(proxy) asked for authentication (407) to CONNECT to \(authority) \(what)"
        )
    }

    /// No party asks for more: check Digest's `Authentication-Info`, then follow or deliver.
    private mutating func settled(_ received: Received) -> Action {
        let response = received.response
        var check: DigestBodyCheck?
        if !received.proxyChallenged {
            do {
                check = try Self.authenticationInfoCheck(response, originHop.attempt, received.expectation)
            } catch {
                return fail(error)
            }
            originHop.clearAttempt()
        }
        if settings.followsRedirects, let next = RedirectPolicy.nextRequest(after: response, for: request) {
            state = .decidingRedirect(received, check)
            return .decideRedirect(response, proposed: next)
        }
        state = .delivering(response)
        return .deliver(response, check)
    }

    /// Checks a Digest response's `Authentication-Info` (a wrong `rspauth` throws; a `nextnonce`
    /// is taken). For `auth-int` the check needs the body: it is returned, to run as the body passes.
    private static func authenticationInfoCheck(
        _ response: HTTPResponse,
        _ attempt: ChallengeResolver.Attempt?,
        _ expectation: DigestAuthorizer.Expectation?
    ) throws -> DigestBodyCheck? {
        guard response.status != 401, let attempt, case .digest(let digest) = attempt.authorizer,
            let expectation, let info = response.headers["Authentication-Info"]
        else { return nil }
        if expectation.qop == "auth-int" {
            return DigestBodyCheck(authorizer: digest, info: info, expectation: expectation)
        }
        try digest.verify(info, expectation: expectation)
        return nil
    }

    private mutating func withHop(_ party: Challenger, _ body: (inout AuthHop) -> AuthHop.Step) -> AuthHop.Step {
        switch party {
        case .origin: return body(&originHop)
        case .proxy: return body(&proxyHop)
        case .tunnel:
            guard var hop = tunnelHop else {
                return .fail(SesameError(.internalError, "a tunnel's challenge with no tunnel being opened"))
            }
            defer { tunnelHop = hop }
            return body(&hop)
        }
    }

    private mutating func fail(_ error: any Error) -> Action {
        state = .finished
        return .fail(error)
    }

    private mutating func impossible(_ event: String) -> Action {
        assertionFailure("TaskStateMachine: \(event) cannot happen in state \(state)")
        return fail(SesameError(.internalError, "the task's state machine got \(event) in state \(state)"))
    }
}

extension AuthHop.Step {
    /// The party has its answer for the response: it stands, it is sent again, or the task fails.
    fileprivate var isFinal: Bool {
        switch self {
        case .deliver, .retry, .fail: true
        case .lookUpCredential, .ask, .establish: false
        }
    }
}
