/// The challenge state of one party of a task (its origin or its forwarding proxy), a value-type
/// state machine (DESIGN section 3). No I/O, no delegate calls: it returns steps that ``AuthHop``
/// and the session perform (the credential look-up too); failures are steps, never throws.
struct ChallengeResolver: Sendable {
    /// What the caller does next.
    enum Step: Sendable {
        /// Deliver the response as it is; `succeeded` is the attempt it proves right, if any.
        case deliver(succeeded: Attempt?)
        /// Find a credential for the space without asking (URL user info, storage, `.netrc`) and
        /// feed it to ``credentialFound(_:)``.
        case lookUpCredential(ProtectionSpace)
        /// Ask the delegates (or default handling) and feed the answer to ``answered(_:_:by:method:for:)``.
        case ask(AuthenticationChallenge)
        /// Send the request again with this credential.
        case retry(Attempt)
        /// Run the next step of the attempt's exchange (Negotiate, NTLM) with the server's token
        /// (off the task's thread: Negotiate's may reach the KDC) and feed the outcome to
        /// ``contextEstablished(_:)``.
        case establish(Attempt, input: [UInt8]?)
        case fail(SesameError)
    }

    /// Failed attempts before the response is delivered without asking again.
    let maximumFailures: Int
    /// Requests sent again with a credential, across every protection space, before a challenge
    /// is delivered as it is: a server that names a new realm (or stale nonce) each time cannot
    /// keep a task going.
    let maximumRoundTrips: Int
    var cleartext: CleartextPolicy
    let task: SessionTask?
    /// Whether the request's body can be hashed (for Digest `auth-int`); set before each send.
    var bodyIsHashable = true
    /// How each challenge was answered, as it was (kept only when someone observes traces).
    private var log: ChallengeTraceLog
    var recordsTraces: Bool {
        get { log.isOn }
        set { log.isOn = newValue }
    }
    private var history = ChallengeHistory()
    /// What went out with the request last sent, and whether preemptively (then it is already
    /// kept, and its success is not stored again).
    private var pending: (attempt: Attempt, preemptive: Bool)?
    /// The attempt the last challenged response turned down.
    private(set) var lastFailure: Attempt?
    /// What Negotiate answers may do (delegation, NTLM through SPNEGO).
    let negotiate: NegotiateOptions
    /// The Negotiate step running now: one for a token to send, or one checking the server's final
    /// token (mutual authentication) before its response is delivered.
    private var establishing: Establishing?
    /// Problems to report, such as a Negotiate answer that could not be made.
    private var problems: [String] = []

    private enum Establishing {
        case sending(Attempt)
        case verifying(Attempt, preemptive: Bool)
    }
    /// The last challenged response, its offers, and the one being answered.
    private var (offered, position, failureResponse) = ([ChallengeOffer](), 0, HTTPResponse?.none)

    init(
        maximumFailures: Int,
        maximumRoundTrips: Int = 10,
        allowsCleartextPasswords: Bool,
        cleartextConsent: CleartextConsent? = nil,
        task: SessionTask?,
        recordsTraces: Bool = true,
        negotiate: NegotiateOptions = NegotiateOptions()
    ) {
        self.negotiate = negotiate
        self.maximumFailures = maximumFailures
        self.maximumRoundTrips = maximumRoundTrips
        cleartext = CleartextPolicy(allowsEveryPassword: allowsCleartextPasswords, consent: cleartextConsent)
        self.task = task
        log = ChallengeTraceLog(isOn: recordsTraces)
    }

    /// The request goes out with `attempt` already in it (preemptive authentication).
    mutating func sending(preemptive attempt: Attempt) {
        pending = (attempt, true)
        let (space, user) = (attempt.space, attempt.credential.user)
        log.record(space, history.failureCount(space), .preemptive, .useCredential, user, attempt.authorizer.summary)
    }

    mutating func drainTraces() -> [ChallengeTrace] { log.drain() }

    /// Removes and returns the problems to report.
    mutating func drainProblems() -> [String] {
        defer { problems = [] }
        return problems
    }

    /// A response arrived for the request last sent. `challenged` is true for the status that
    /// carries challenges here (401 from a server, 407 from a proxy); `offers` are the challenges
    /// it offered, strongest first.
    mutating func received(_ response: HTTPResponse, challenged: Bool, offers: [ChallengeOffer]) -> Step {
        let sent = pending
        (pending, lastFailure) = (nil, nil)
        if let sent, case .exchange(let exchange) = sent.attempt.authorizer,
            let step = exchangeReceived(sent, exchange, challenged: challenged, offers: offers, response: response)
        {
            return step
        }
        guard challenged else { return .deliver(succeeded: sent?.preemptive == false ? sent?.attempt : nil) }
        if let attempt = sent?.attempt {
            // A stale nonce is not a wrong password: send again once with the new nonce, without
            // asking anyone and without counting a failure.
            if case .digest(let digest) = attempt.authorizer, history.roundTrips < maximumRoundTrips,
                let fresh = offers.first(where: {
                    $0.space == attempt.space && $0.digest?.stale == true && $0.digest?.algorithm == digest.algorithm
                })?.digest, history.takeStaleRenewal(attempt.space)
            {
                digest.renew(fresh)
                pending = sent
                let (space, user) = (attempt.space, attempt.credential.user)
                let detail = "\(digest.summary), stale nonce renewed"
                log.record(space, history.failureCount(space), attempt.responder, .useCredential, user, detail)
                return .retry(attempt)
            }
            history.failed(attempt.space)
            lastFailure = attempt
        }
        guard history.roundTrips < maximumRoundTrips else {
            if let space = offers.first?.space ?? sent?.attempt.space {
                let detail = "\(history.roundTrips) challenge round trips, the most one task makes"
                let count = history.failureCount(space)
                log.record(space, count, .failureLimit, .cancelAuthenticationChallenge, nil, detail)
            }
            return .deliver(succeeded: nil)
        }
        (offered, position, failureResponse) = (offers, 0, response)
        return next()
    }

    /// The answer to the last `.lookUpCredential` step: a credential found without asking, and
    /// where from, or nil.
    mutating func credentialFound(_ found: (Credential, ChallengeTrace.Responder)?) -> Step {
        guard position < offered.count else { return .deliver(succeeded: nil) }
        let offer = offered[position]
        let space = offer.space
        let count = history.failureCount(space)
        if count == 0, let (credential, source) = found, canSend(credential, for: offer),
            history.takeAutomaticTry(space)
        {
            log.record(space, count, source, .useCredential, credential.user, offer.summary)
            return apply(credential, for: offer, responder: source)
        }
        let proposed = history.lastTried(space) ?? found?.0
        let response = failureResponse
        return .ask(.init(space, proposing: proposed, failures: count, response: response, task: task))
    }

    /// The answer to the challenge of the last `.ask` step, who gave it and through which method.
    mutating func answered(
        _ disposition: AuthChallengeDisposition,
        _ credential: Credential?,
        by responder: ChallengeTrace.Responder,
        method: ChallengeTrace.DelegateMethod? = nil,
        for challenge: AuthenticationChallenge
    ) -> Step {
        let space = challenge.protectionSpace
        let offer = offered[min(position, offered.count - 1)]
        let user = disposition == .useCredential ? credential?.user : nil
        let count = challenge.previousFailureCount
        log.record(space, count, responder, disposition, user, offer.summary, method: method)
        switch disposition {
        case .useCredential:
            guard let credential else { return .deliver(succeeded: nil) }
            return apply(credential, for: offer, responder: responder)
        case .performDefaultHandling:
            if let proposed = challenge.proposedCredential, history.lastTried(space) != proposed,
                canSend(proposed, for: offer)
            {
                return apply(proposed, for: offer, responder: .defaultHandling)
            }
            // Negotiate's default answer is the user's Kerberos ticket, tried once.
            guard space.authenticationMethod == .negotiate, offer.isAnswerable,
                history.lastTried(space) != .ticketCache
            else { return .deliver(succeeded: nil) }
            return apply(.ticketCache, for: offer, responder: .defaultHandling)
        case .cancelAuthenticationChallenge:
            return .fail(SesameError(.authenticationCancelled, "the challenge for \(space) was cancelled"))
        case .rejectProtectionSpace:
            position += 1
            return next()
        }
    }

    /// The offered space at `position`: delivery when the failure limit is reached or nothing is
    /// left, else a look-up for a credential found without asking.
    private mutating func next() -> Step {
        guard position < offered.count else { return .deliver(succeeded: nil) }
        let offer = offered[position]
        let count = history.failureCount(offer.space)
        guard count < maximumFailures else {
            log.record(offer.space, count, .failureLimit, .cancelAuthenticationChallenge, nil, offer.summary)
            return .deliver(succeeded: nil)
        }
        return .lookUpCredential(offer.space)
    }

    /// Whether a credential found without asking may be sent for `offer`.
    private func canSend(_ credential: Credential, for offer: ChallengeOffer) -> Bool {
        credential.hasPassword && offer.isAnswerable && cleartext.permits(credential, for: offer.space)
    }

    private mutating func apply(
        _ credential: Credential,
        for offer: ChallengeOffer,
        responder: ChallengeTrace.Responder
    )
        -> Step
    {
        let space = offer.space
        guard !credential.hasPassword || cleartext.permits(credential, for: space) else {
            return .fail(CleartextPolicy.refusal(for: space))
        }
        let made = Attempt.make(
            credential,
            for: offer,
            responder: responder,
            bodyIsHashable: bodyIsHashable,
            negotiate: negotiate
        )
        switch made {
        case .failure(let error):
            return .fail(error)
        case .success(let attempt):
            // The trace of this answer names what was actually sent (algorithm and qop).
            log.amendLast(for: space, detail: attempt.authorizer.summary)
            history.sending(credential, for: space)
            pending = (attempt, false)
            if case .exchange = attempt.authorizer {
                establishing = .sending(attempt)
                return .establish(attempt, input: offer.exchangeToken)
            }
            return .retry(attempt)
        }
    }

    /// The outcome of the last ``Step/establish(_:input:)``.
    mutating func contextEstablished(_ outcome: Result<Void, SesameError>) -> Step {
        guard let running = establishing else {
            return .fail(SesameError(.internalError, "an authentication exchange step ended with none running"))
        }
        establishing = nil
        switch (running, outcome) {
        case (.sending(let attempt), .success):
            return .retry(attempt)
        case (.sending(let attempt), .failure(let error)):
            // No token could be made: the next offer is tried (a Basic the server also offers, say).
            pending = nil
            let scheme = attempt.space.authenticationMethod.schemeName ?? "the exchange"
            problems.append("\(scheme) for \(attempt.space) was not answered: \(error.detail)")
            if let index = offered.firstIndex(where: { $0.space == attempt.space }), index >= position {
                position = index + 1
            }
            if position < offered.count { return next() }
            return attempt.credential.isTicketCache ? .deliver(succeeded: nil) : .fail(error)
        case (.verifying(let attempt, let preemptive), .success):
            guard case .exchange(let exchange) = attempt.authorizer, exchange.isEstablished else {
                return .fail(
                    SesameError(
                        .serverAuthenticationFailed,
                        "\(attempt.space) sent its response before Negotiate was complete, so it is not trusted"
                    )
                )
            }
            return .deliver(succeeded: preemptive ? nil : attempt)
        case (.verifying(let attempt, _), .failure(let error)):
            return .fail(
                SesameError(
                    .serverAuthenticationFailed,
                    "\(attempt.space) did not prove its identity (its final Negotiate token does not verify), so its response is not trusted: \(error.detail)"
                )
            )
        }
    }

    /// A response to a request that carried an exchange's token (Negotiate, NTLM): the server's
    /// next token goes into the exchange, to send again (a 401 that continues it) or to verify the
    /// server (Negotiate's final token of a success). Nil when the response is handled like any other.
    private mutating func exchangeReceived(
        _ sent: (attempt: Attempt, preemptive: Bool),
        _ exchange: any SecurityExchange,
        challenged: Bool,
        offers: [ChallengeOffer],
        response: HTTPResponse
    ) -> Step? {
        let space = sent.attempt.space
        let index = offers.firstIndex { $0.space == space }
        let token = index.flatMap { offers[$0].exchangeToken }
        guard challenged else {
            guard let token, exchange.provesServer else {
                if exchange.provesServer, !exchange.isEstablished {
                    problems.append(
                        "\(space) answered without Negotiate's final token: the server did not prove its identity"
                    )
                }
                return nil
            }
            establishing = .verifying(sent.attempt, preemptive: sent.preemptive)
            return .establish(sent.attempt, input: token)
        }
        // A 401 carrying a token continues the exchange (SPNEGO may take several legs): not a failure.
        guard let index, let token, !exchange.isEstablished, history.roundTrips < maximumRoundTrips else { return nil }
        history.continuing()
        (offered, position, failureResponse) = (offers, index, response)
        pending = sent
        establishing = .sending(sent.attempt)
        return .establish(sent.attempt, input: token)
    }
}
