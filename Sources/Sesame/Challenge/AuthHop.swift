import FoundationEssentials
import Glibc

/// One party that can challenge a task, with everything about its authentication: the origin
/// server (401, `WWW-Authenticate`, `Authorization`) or a forwarding proxy (407,
/// `Proxy-Authenticate`, `Proxy-Authorization`). The same value serves both.
///
/// It holds the party's ``ChallengeResolver``, the credential going out with the current request,
/// and the walk along the delegate chain for the challenge being asked about. Like the resolver it
/// does no I/O: look-ups and delegate questions are steps; what must be kept or forgotten, and every
/// trace, are ``TaskEffect``s the driver performs.
struct AuthHop: Sendable {
    enum Party: Sendable, Equatable {
        case origin
        case proxy
    }

    /// What the driver does next for this party.
    enum Step: Sendable {
        /// The response stands, as far as this party is concerned.
        case deliver
        /// Send the request again, with ``attempt``.
        case retry
        /// Find a credential for the space without asking; answer with ``credentialFound(_:)``.
        case lookUpCredential(ProtectionSpace)
        /// Call this delegate method; answer with ``answered(_:)``.
        case ask(DelegateChain.Entry, AuthenticationChallenge)
        /// Run the exchange's next step with the server's token, off the task's thread (Negotiate's
        /// may reach the KDC); answer with ``contextEstablished(_:url:)``.
        case establish(any SecurityExchange, input: [UInt8]?)
        case fail(SesameError)
    }

    /// The limits and choices of the session's configuration that concern one party.
    struct Settings: Sendable {
        var maximumFailures: Int
        var maximumRoundTrips: Int
        var allowsCleartextPasswords: Bool
        var recordsTraces: Bool
        /// The schemes answered (nil: every scheme Sesame can answer).
        var methods: Set<AuthenticationMethod>?
        /// What Negotiate answers may do.
        var negotiate = NegotiateOptions()
    }

    let party: Party
    private var resolver: ChallengeResolver
    /// The credential that goes out with the current request, if any.
    private(set) var attempt: ChallengeResolver.Attempt?
    /// The forwarding proxy of the current request, and the one ``attempt`` is for (proxy party).
    private var proxy: ProxyEndpoint?
    private var attemptProxy: ProxyEndpoint?
    private var proxyCredential: Credential?
    /// The origin's cleartext consent comes from this URL (the task's own), worked out when first needed.
    private var consentURL: URL?
    private let methods: Set<AuthenticationMethod>?
    private let hasTaskDelegate: Bool
    private let hasSessionDelegate: Bool
    private var asking: (walk: DelegateWalk, entry: DelegateChain.Entry?, challenge: AuthenticationChallenge)?
    private var effects: [TaskEffect] = []

    /// - Parameters:
    ///   - consentURL: for the origin, the task's own URL, whose user and password may go out in
    ///     cleartext to that origin.
    ///   - hasTaskDelegate: the task has a delegate of its own (not the session's).
    init(
        _ party: Party,
        settings: Settings,
        task: SessionTask?,
        consentURL: URL? = nil,
        hasTaskDelegate: Bool,
        hasSessionDelegate: Bool
    ) {
        self.party = party
        resolver = ChallengeResolver(
            maximumFailures: settings.maximumFailures,
            maximumRoundTrips: settings.maximumRoundTrips,
            allowsCleartextPasswords: settings.allowsCleartextPasswords,
            task: task,
            recordsTraces: settings.recordsTraces,
            negotiate: settings.negotiate
        )
        self.consentURL = consentURL
        methods = settings.methods
        self.hasTaskDelegate = hasTaskDelegate
        self.hasSessionDelegate = hasSessionDelegate
    }

    /// Whether a credential the session already knows should be looked for: none goes out yet.
    var wantsKnownAttempt: Bool { attempt == nil }

    /// Whether a credential the session keeps for `proxy` should be looked for.
    func wantsKnownAttempt(forProxy proxy: ProxyEndpoint) -> Bool { attempt == nil || attemptProxy != proxy }

    /// The next request goes through the forwarding `proxy` (proxy party). `credential` is the one
    /// in the proxy's URL (consent to send it there); `known` is the session's credential for the
    /// proxy, asked for when ``wantsKnownAttempt(forProxy:)`` said so.
    mutating func route(through proxy: ProxyEndpoint, credential: Credential?, known: ChallengeResolver.Attempt?) {
        self.proxy = proxy
        proxyCredential = credential
        resolver.cleartext.consent = CleartextConsent(proxy: proxy, credential: credential)
        guard wantsKnownAttempt(forProxy: proxy) else { return }
        attempt = known
        attemptProxy = known == nil ? nil : proxy
        if let known { sending(preemptive: known) }
    }

    /// The next request goes out with `known`, a credential that already worked here.
    mutating func sending(preemptive known: ChallengeResolver.Attempt) {
        attempt = known
        resolver.sending(preemptive: known)
        drainTraces()
    }

    /// The party took the request: nothing goes out with the next one unless asked for again.
    mutating func clearAttempt() { attempt = nil }

    /// The header value, and Digest's expectation of the answer, for `request` sent to `uri`.
    func authorization(for request: HTTPRequest, uri: String) throws -> (String, DigestAuthorizer.Expectation?)? {
        try attempt.map { try $0.authorizer.header(for: request, uri: uri) }
    }

    /// The response to the request just sent. `challenged` is true for this party's status (401
    /// for the origin, 407 for a proxy); `origin` is the party's own (the server's, or the proxy's).
    mutating func received(
        _ response: HTTPResponse,
        challenged: Bool,
        to request: HTTPRequest,
        origin: Origin
    )
        -> Step
    {
        if let url = consentURL {
            resolver.cleartext.consent = CleartextConsent(requestURL: url)
            consentURL = nil
        }
        resolver.bodyIsHashable = request.body?.isHashable ?? true
        guard challenged else {
            // A Negotiate success may carry the server's final token: the proof of its identity.
            var finals: [ChallengeOffer] = []
            if case .exchange? = attempt?.authorizer {
                finals = OfferedProtectionSpaces.parse(response, origin: origin, isProxy: party == .proxy).offers
            }
            return advance(resolver.received(response, challenged: false, offers: finals), url: request.url)
        }
        let offered = OfferedProtectionSpaces.parse(response, origin: origin, isProxy: party == .proxy)
        let offers = offered.offers.filter { methods?.contains($0.space.authenticationMethod) ?? true }
        for problem in offered.problems { effects.append(.problem(problem)) }
        // A stronger scheme Sesame cannot answer means a downgrade: say so.
        for offer in offers where offer.digest != nil && !offer.isAnswerable {
            effects.append(.problem("\(offer.summary) is not supported (not answered; weaker schemes may be)"))
        }
        let step = resolver.received(response, challenged: true, offers: offers)
        if let failed = resolver.lastFailure, failed.responder == .preemptive {
            effects.append(.refused(failed.space, keeper(for: request.url)))
        }
        return advance(step, url: request.url)
    }

    /// The answer to ``Step/lookUpCredential(_:)`` for a request to `url`.
    mutating func credentialFound(_ found: (Credential, ChallengeTrace.Responder)?, url: URL) -> Step {
        advance(resolver.credentialFound(found), url: url)
    }

    /// The outcome of the last ``Step/establish(_:input:)``, for a request to `url`.
    mutating func contextEstablished(_ outcome: Result<Void, SesameError>, url: URL) -> Step {
        advance(resolver.contextEstablished(outcome), url: url)
    }

    /// What the delegate method of the last ``Step/ask(_:_:)`` said, for a request to `url`.
    mutating func answered(_ answer: DelegateAnswer, url: URL) -> Step {
        guard let (_, entry, challenge) = asking, let entry else {
            return .fail(SesameError(.internalError, "a delegate answer arrived with no question asked"))
        }
        switch answer {
        case .methodMissing:
            return nextQuestion(url: url)
        case .answered(let disposition, let credential):
            asking = nil
            let step = resolver.answered(
                disposition,
                credential,
                by: entry.responder,
                method: entry.method,
                for: challenge
            )
            return advance(step, url: url)
        }
    }

    /// Removes and returns what the driver must do besides the next step.
    mutating func takeEffects() -> [TaskEffect] {
        guard !effects.isEmpty else { return [] }
        defer { effects = [] }
        return effects
    }

    private mutating func advance(_ step: ChallengeResolver.Step, url: URL) -> Step {
        drainTraces()
        switch step {
        case .deliver(let succeeded):
            if let succeeded { effects.append(.succeeded(succeeded, keeper(for: url))) }
            return .deliver
        case .retry(let next):
            attempt = next
            attemptProxy = proxy
            return .retry
        case .fail(let error):
            return .fail(error)
        case .establish(let next, let input):
            guard case .exchange(let exchange) = next.authorizer else {
                return .fail(SesameError(.internalError, "an exchange step for an attempt of another scheme"))
            }
            attempt = next
            attemptProxy = proxy
            return .establish(exchange, input: input)
        case .lookUpCredential(let space):
            // The proxy URL's own credential comes first, for that proxy.
            if party == .proxy, space.isProxy, let credential = proxyCredential {
                return advance(resolver.credentialFound((credential, .urlUserInfo)), url: url)
            }
            return .lookUpCredential(space)
        case .ask(let challenge):
            let chain = DelegateChain.route(
                challenge.protectionSpace.authenticationMethod,
                hasTask: resolver.task != nil,
                hasTaskDelegate: hasTaskDelegate,
                hasSessionDelegate: hasSessionDelegate
            )
            asking = (DelegateWalk(chain), nil, challenge)
            return nextQuestion(url: url)
        }
    }

    /// The next delegate method to ask, or default handling when none is left.
    private mutating func nextQuestion(url: URL) -> Step {
        guard case (var walk, _, let challenge)? = asking else {
            return .fail(SesameError(.internalError, "no challenge is being asked about"))
        }
        if let entry = walk.next() {
            asking = (walk, entry, challenge)
            return .ask(entry, challenge)
        }
        asking = nil
        return advance(
            resolver.answered(.performDefaultHandling, nil, by: .defaultHandling, for: challenge),
            url: url
        )
    }

    private func keeper(for url: URL) -> TaskEffect.Keeper {
        if party == .proxy, let proxy { return .proxy(proxy) }
        return .origin(url)
    }

    private mutating func drainTraces() {
        for problem in resolver.drainProblems() { effects.append(.problem(problem)) }
        guard resolver.recordsTraces else { return }
        for trace in resolver.drainTraces() { effects.append(.trace(trace)) }
    }
}

/// What a task's state machine asks the driver to do besides its next action: keep or forget a
/// credential, report a trace or a problem.
enum TaskEffect: Sendable {
    /// Where a credential that worked is kept: for the origin of a URL (sent preemptively to its
    /// directory from now on), or for a forwarding proxy.
    enum Keeper: Sendable {
        case origin(URL)
        case proxy(ProxyEndpoint)
    }

    /// A challenge was answered (``SessionEvent/challenge(_:)``).
    case trace(ChallengeTrace)
    /// A challenge header could not be used, or a response could not be answered as asked.
    case problem(String)
    /// The credential worked: keep it per its persistence.
    case succeeded(ChallengeResolver.Attempt, Keeper)
    /// A credential sent without asking was refused: stop sending it.
    case refused(ProtectionSpace, Keeper)
    /// A redirect is followed.
    case redirected(status: Int, to: URL)

    /// Whether this is a success of a connection-oriented exchange (NTLM, Negotiate), after
    /// which the server may take the connection's later requests as the user's.
    var authenticatesConnection: Bool {
        guard case .succeeded(let attempt, _) = self, case .exchange = attempt.authorizer else { return false }
        return true
    }
}
