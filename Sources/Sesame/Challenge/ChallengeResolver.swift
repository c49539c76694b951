/// The challenge state of one task, as a value-type state machine (DESIGN section 3): which
/// protection space is being answered, what was tried, how often it failed, and what to do next.
///
/// The session feeds it responses and delegate answers and performs the steps it returns; it does
/// no I/O and calls no delegate itself, so every path is unit-testable.
struct ChallengeResolver: Sendable {
    /// What the caller does next.
    enum Step: Sendable {
        /// Deliver the response as it is. `succeeded` is the credential attempt the response
        /// proves right (to be stored per its persistence), if any.
        case deliver(succeeded: Attempt?)
        /// Ask the delegates (or default handling) and feed the answer to ``answered(_:_:by:automatic:)``.
        case ask(AuthenticationChallenge)
        /// Send the request again with this credential.
        case retry(Attempt)
        /// Fail the task.
        case fail(SesameError)
    }

    /// A credential sent for a protection space.
    struct Attempt: Sendable {
        let space: ProtectionSpace
        let credential: Credential
        let responder: ChallengeTrace.Responder
        let authorizer: Authorizer
    }

    /// Makes the header value for each request an attempt goes out with.
    enum Authorizer: Sendable {
        /// The same value every time (Basic).
        case fixed(String)
        /// Computed per request (Digest: method, URI, nonce count, body hash).
        case digest(DigestAuthorizer)

        /// "Basic" or "Digest SHA-256 qop=auth".
        var summary: String {
            switch self {
            case .fixed(let value): String(value.prefix { $0 != " " })
            case .digest(let digest): digest.summary
            }
        }
    }

    /// A credential found without asking anyone, and where from.
    typealias Automatic = @Sendable (ProtectionSpace) throws -> (Credential, ChallengeTrace.Responder)?

    /// Failed attempts before the response is delivered without asking again.
    let maximumFailures: Int
    /// Requests sent again with a credential, across every protection space, before a challenge
    /// is delivered as it is: a server that names a new realm (or a new stale nonce) each time
    /// cannot keep a task going.
    let maximumRoundTrips: Int
    private var roundTrips = 0
    /// Whether any password may be sent where it can be read on the wire (the configuration's
    /// explicit opt-in for the whole session).
    let allowsCleartextPasswords: Bool
    /// The one password the caller consented to send readable on the wire, and where to.
    var cleartextConsent: CleartextConsent?
    let task: SessionTask?

    private var failures: [ProtectionSpace: Int] = [:]
    private var lastTried: [ProtectionSpace: Credential] = [:]
    private var automaticTried: Set<ProtectionSpace> = []
    private var pending: Attempt?
    /// `pending` was sent preemptively: it is already kept, so its success is not stored again.
    private var pendingIsPreemptive = false
    /// The attempt the last challenged response turned down.
    private(set) var lastFailure: Attempt?
    private var offered: [ChallengeOffer] = []
    private var staleRetried: Set<ProtectionSpace> = []
    /// Whether the request's body can be hashed (for Digest `auth-int`); set before each send.
    var bodyIsHashable = true
    private var position = 0
    private var failureResponse: HTTPResponse?
    /// Every challenge answered so far, oldest first (drained by the session for its observer).
    private(set) var traces: [ChallengeTrace] = []
    /// Whether to keep traces: off when nobody observes them (a trace costs a description of the
    /// credential's scheme and a failure-count lookup, on every preemptively authorized request).
    var recordsTraces: Bool

    init(
        maximumFailures: Int,
        maximumRoundTrips: Int = 10,
        allowsCleartextPasswords: Bool,
        cleartextConsent: CleartextConsent? = nil,
        task: SessionTask?,
        recordsTraces: Bool = true
    ) {
        self.maximumFailures = maximumFailures
        self.maximumRoundTrips = maximumRoundTrips
        self.allowsCleartextPasswords = allowsCleartextPasswords
        self.cleartextConsent = cleartextConsent
        self.task = task
        self.recordsTraces = recordsTraces
    }

    /// `previousFailureCount` counts per server and realm, across schemes.
    private static func failureKey(_ space: ProtectionSpace) -> ProtectionSpace {
        space.with(realm: space.realm, method: .default)
    }

    /// The request goes out with `attempt` already in it (preemptive authentication).
    mutating func sending(preemptive attempt: Attempt) {
        pending = attempt
        pendingIsPreemptive = true
        if recordsTraces {
            traces.append(
                ChallengeTrace(
                    protectionSpace: attempt.space,
                    previousFailureCount: failures[Self.failureKey(attempt.space)] ?? 0,
                    responder: .preemptive,
                    disposition: .useCredential,
                    user: attempt.credential.user,
                    detail: attempt.authorizer.summary
                )
            )
        }
    }

    /// Removes and returns the traces collected so far.
    mutating func drainTraces() -> [ChallengeTrace] {
        defer { traces = [] }
        return traces
    }

    /// A response arrived for the request last sent. `challenged` is true for the status that
    /// carries challenges here (401 from a server, 407 from a proxy); `offers` are the challenges
    /// it offered, strongest first.
    mutating func received(
        _ response: HTTPResponse,
        challenged: Bool,
        offers: [ChallengeOffer],
        automatic: Automatic
    ) throws -> Step {
        let attempt = pending
        let wasPreemptive = pendingIsPreemptive
        pending = nil
        pendingIsPreemptive = false
        lastFailure = nil
        // A preemptive attempt came from what the session keeps: storing it again on every
        // success would only repeat the work (and rewrite a permanent store each time).
        guard challenged else { return .deliver(succeeded: wasPreemptive ? nil : attempt) }
        guard roundTrips < maximumRoundTrips else {
            if let attempt {
                failures[Self.failureKey(attempt.space), default: 0] += 1
                lastFailure = attempt
            }
            if recordsTraces, let space = offers.first?.space ?? attempt?.space {
                traces.append(
                    ChallengeTrace(
                        protectionSpace: space,
                        previousFailureCount: failures[Self.failureKey(space)] ?? 0,
                        responder: .failureLimit,
                        disposition: .cancelAuthenticationChallenge,
                        user: nil,
                        detail: "\(roundTrips) challenge round trips, the most one task makes"
                    )
                )
            }
            return .deliver(succeeded: nil)
        }
        if let attempt {
            let key = Self.failureKey(attempt.space)
            // A stale nonce is not a wrong password: send again once with the new nonce, without
            // asking anyone and without counting a failure.
            if case .digest(let digest) = attempt.authorizer, !staleRetried.contains(key),
                let fresh = offers.first(where: {
                    $0.space == attempt.space && $0.digest?.stale == true && $0.digest?.algorithm == digest.algorithm
                })?.digest
            {
                staleRetried.insert(key)
                digest.renew(fresh)
                roundTrips += 1
                pending = attempt
                pendingIsPreemptive = wasPreemptive
                if recordsTraces {
                    traces.append(
                        ChallengeTrace(
                            protectionSpace: attempt.space,
                            previousFailureCount: failures[key] ?? 0,
                            responder: attempt.responder,
                            disposition: .useCredential,
                            user: attempt.credential.user,
                            detail: "\(digest.summary), stale nonce renewed"
                        )
                    )
                }
                return .retry(attempt)
            }
            failures[key, default: 0] += 1
            lastFailure = attempt
        }
        offered = offers
        position = 0
        failureResponse = response
        return try next(automatic: automatic)
    }

    /// The answer to the challenge of the last `.ask` step.
    mutating func answered(
        _ disposition: AuthChallengeDisposition,
        _ credential: Credential?,
        by responder: ChallengeTrace.Responder,
        for challenge: AuthenticationChallenge,
        automatic: Automatic
    ) throws -> Step {
        let space = challenge.protectionSpace
        let offer = offered[min(position, offered.count - 1)]
        if recordsTraces {
            traces.append(
                ChallengeTrace(
                    protectionSpace: space,
                    previousFailureCount: challenge.previousFailureCount,
                    responder: responder,
                    disposition: disposition,
                    user: disposition == .useCredential ? credential?.user : nil,
                    detail: offer.summary
                )
            )
        }
        switch disposition {
        case .useCredential:
            guard let credential else { return .deliver(succeeded: nil) }
            return try apply(credential, for: offer, responder: responder)
        case .performDefaultHandling:
            guard let proposed = challenge.proposedCredential, lastTried[Self.failureKey(space)] != proposed,
                canSend(proposed, for: offer)
            else {
                return .deliver(succeeded: nil)
            }
            return try apply(proposed, for: offer, responder: .defaultHandling)
        case .cancelAuthenticationChallenge:
            return .fail(SesameError(.authenticationCancelled, "the challenge for \(space) was cancelled"))
        case .rejectProtectionSpace:
            position += 1
            return try next(automatic: automatic)
        }
    }

    /// Looks at the offered space at `position`: a credential found without asking, a question for
    /// the delegates, or delivery when the failure limit is reached or nothing is left.
    private mutating func next(automatic: Automatic) throws -> Step {
        guard position < offered.count else { return .deliver(succeeded: nil) }
        let offer = offered[position]
        let space = offer.space
        let key = Self.failureKey(space)
        let count = failures[key] ?? 0
        guard count < maximumFailures else {
            if recordsTraces {
                traces.append(
                    ChallengeTrace(
                        protectionSpace: space,
                        previousFailureCount: count,
                        responder: .failureLimit,
                        disposition: .cancelAuthenticationChallenge,
                        user: nil,
                        detail: offer.summary
                    )
                )
            }
            return .deliver(succeeded: nil)
        }
        let found = try automatic(space)
        if count == 0, let (credential, source) = found, !automaticTried.contains(key),
            canSend(credential, for: offer)
        {
            automaticTried.insert(key)
            if recordsTraces {
                traces.append(
                    ChallengeTrace(
                        protectionSpace: space,
                        previousFailureCount: count,
                        responder: source,
                        disposition: .useCredential,
                        user: credential.user,
                        detail: offer.summary
                    )
                )
            }
            return try apply(credential, for: offer, responder: source)
        }
        let challenge = AuthenticationChallenge(
            protectionSpace: space,
            proposedCredential: lastTried[key] ?? found?.0,
            previousFailureCount: count,
            failureResponse: failureResponse,
            error: nil,
            task: task
        )
        return .ask(challenge)
    }

    /// Whether a credential found without asking may be sent for `offer`.
    private func canSend(_ credential: Credential, for offer: ChallengeOffer) -> Bool {
        credential.hasPassword && offer.isAnswerable && mayTravel(credential, for: offer.space)
    }

    /// Whether `credential` may be sent for `space`: over a secure channel, or with the caller's
    /// consent for that credential and that server (or for every password, when the configuration
    /// allows cleartext passwords).
    private func mayTravel(_ credential: Credential, for space: ProtectionSpace) -> Bool {
        space.receivesCredentialSecurely || allowsCleartextPasswords
            || cleartextConsent?.covers(credential, for: space) == true
    }

    private mutating func apply(
        _ credential: Credential,
        for offer: ChallengeOffer,
        responder: ChallengeTrace.Responder
    ) throws -> Step {
        let space = offer.space
        guard let user = credential.user, let password = credential.password else {
            return .fail(
                SesameError(.unsupportedCredential, "\(space) needs a user and password, not \(credential)")
            )
        }
        guard mayTravel(credential, for: space) else {
            return .fail(
                SesameError(
                    .cleartextCredentialRefused,
                    "\(space) would send the password readable on the wire; use https, or allow cleartext passwords in the configuration"
                )
            )
        }
        let authorizer: Authorizer
        switch space.authenticationMethod {
        case .httpBasic:
            authorizer = .fixed(try BasicAuthentication.authorization(user: user, password: password))
        case .httpDigest:
            guard let digest = offer.digest else {
                return .fail(SesameError(.unsupportedCredential, "\(space) offered no usable Digest parameters"))
            }
            do {
                authorizer = .digest(
                    try DigestAuthorizer(
                        challenge: digest,
                        user: user,
                        password: password,
                        bodyIsHashable: bodyIsHashable
                    )
                )
            } catch let error as SesameError {
                return .fail(error)
            }
        default:
            return .fail(
                SesameError(
                    .unsupportedCredential,
                    "Sesame cannot answer \(space.authenticationMethod) challenges with a password"
                )
            )
        }
        let attempt = Attempt(space: space, credential: credential, responder: responder, authorizer: authorizer)
        // The trace of this answer names what was actually sent (algorithm and qop).
        if let last = traces.last, last.protectionSpace == space, last.disposition != .rejectProtectionSpace {
            traces[traces.count - 1] = ChallengeTrace(
                protectionSpace: last.protectionSpace,
                previousFailureCount: last.previousFailureCount,
                responder: last.responder,
                disposition: last.disposition,
                user: last.user,
                detail: authorizer.summary
            )
        }
        lastTried[Self.failureKey(space)] = credential
        roundTrips += 1
        pending = attempt
        return .retry(attempt)
    }
}
