import FoundationEssentials
import Glibc

extension Session {
    /// Runs `task` to its final response, following redirects, and streams the body into `sink`.
    /// `expecting` learns the final body's length before its bytes, when it is known.
    func run(
        _ task: SessionTask,
        notifyingDelegates: Bool = false,
        expecting: ((Int) -> Void)? = nil,
        sink: @escaping ([UInt8]) async throws -> Void
    ) async throws -> HTTPResponse {
        defer { task.complete() }
        let deadline = loop.now + configuration.resourceTimeout
        do {
            // The driver runs on the loop that owns the connections: a request and its answer
            // meet the connection there without a thread hop or a lock, and no thread of Swift's
            // pool is held while the answer is awaited. What may block or runs the user's code
            // (delegates, the token source, the credential stores, a download's file) leaves
            // the loop (`offLoop`, `BlockingWorkThreads`).
            return try await withTaskExecutorPreference(loop) {
                try await drive(task, deadline, notifyingDelegates, expecting, sink)
            }
        } catch let error as SesameError
            where (error.code == .connectTimeout || error.code == .timeout) && loop.now >= deadline
        {
            // The task's own deadline ended it, wherever it was (connecting, waiting, reading).
            throw SesameError(.timeout, "the task did not finish within the resource timeout (\(error.detail))")
        } catch is CancellationError {
            throw SesameError(.cancelled, "the task was cancelled")
        } catch let error as SesameError where error.code == .cancelled && task.isCancelled {
            throw SesameError(.cancelled, "the task was cancelled")
        }
    }

    /// Performs the actions of the task's ``TaskStateMachine`` until it completes or fails.
    private func drive(
        _ task: SessionTask,
        _ deadline: ContinuousClock.Instant,
        _ notifyingDelegates: Bool,
        _ expecting: ((Int) -> Void)?,
        _ sink: @escaping ([UInt8]) async throws -> Void
    ) async throws -> HTTPResponse {
        var machine = try stateMachine(for: task)
        var reader: (any ResponseReader)?
        // The last response's HTTP/1.1 connection: an answer to its challenge goes on it if idle.
        var lastConnection: Connection?
        var opening = OpeningInProgress()
        defer { opening.step?.abandon() }
        var action = machine.start()
        while true {
            await perform(machine.takeEffects(), reading: reader)
            switch action {
            case .followRedirect(let next):
                task.update(request: next)
                fallthrough
            case .route:
                try Task.checkCancellation()
                lastConnection = reader?.exclusiveConnection
                await reader?.discard()
                reader = nil
                action = try await route(&machine)
            case .send(let exchange):
                defer { lastConnection = nil }
                (action, reader) = try await send(exchange, &machine, &opening, task, deadline, lastConnection)
            case .connectTunnel(let request):
                await startConnect(request, &opening, task, deadline)
                (action, reader) = try await awaitOpening(&opening, &machine, task, deadline)
            case .sendInTunnel(let exchange):
                try startTLS(inTunnelFor: exchange, &opening, task)
                (action, reader) = try await awaitOpening(&opening, &machine, task, deadline)
            case .answerHandshake(let disposition, let credential):
                opening.step?.answer((disposition, credential))
                (action, reader) = try await awaitOpening(&opening, &machine, task, deadline)
            case .lookUpCredential(let space):
                action = await lookUp(space, &machine)
            case .ask(let entry, let challenge):
                action = machine.challengeAnswered(await ask(entry, challenge, task: task))
            case .establish(let context, let input):
                let tls = opening.tunnel?.answered?.connection.tlsInfo ?? reader?.tlsInfo
                action = machine.contextEstablished(await establish(context, input: input, over: tls))
            case .refreshToken(let rejected):
                do {
                    try await refreshToken(rejecting: rejected, for: machine.origin)
                    action = machine.tokenRefreshed()
                } catch {
                    action = machine.failed(error)
                }
            case .decideRedirect(let response, let proposed):
                action = machine.redirectDecided(await redirectDecision(response, proposed, task))
            case .deliver(let response, let check):
                guard let reader else {
                    action = machine.failed(SesameError(.internalError, "a response was delivered before its head"))
                    continue
                }
                do {
                    try await stream(reader, of: response, task, notifyingDelegates, expecting, check, sink)
                    action = machine.bodyFinished()
                } catch {
                    action = machine.failed(error)
                }
            case .complete(var response):
                if let trailers = reader?.trailers { response.trailers = trailers }
                return response
            case .fail(let error):
                reader?.abandon()
                await opening.tunnel?.close()
                throw error
            }
        }
    }

    /// Looks for a credential for `space` without asking, and tells the machine what was found.
    private func lookUp(_ space: ProtectionSpace, _ machine: inout TaskStateMachine) async -> TaskStateMachine.Action {
        do {
            return machine.credentialFound(try await automaticCredential(for: space, url: machine.request.url))
        } catch {
            return machine.failed(error as? SesameError ?? SesameError(.credentialStoreFailed, "\(error)"))
        }
    }

    /// Routes the machine's next request and tells it what the session knows for it (the
    /// session's Bearer token included, when it wants one).
    private func route(_ machine: inout TaskStateMachine) async throws -> TaskStateMachine.Action {
        var routing = try routing(for: machine)
        if machine.wantsBearerToken, let tokenSource {
            do {
                routing.bearerToken = try await tokenSource.token(for: machine.origin)
            } catch {
                return machine.failed(error)
            }
        }
        return machine.routed(routing)
    }

    /// The state machine of `task`'s journey, with the session's settings and delegates.
    private func stateMachine(for task: SessionTask) throws -> TaskStateMachine {
        let (origin, target) = try validatedParts(of: task.originalRequest.url)
        return TaskStateMachine(
            request: task.originalRequest,
            origin: origin,
            target: target,
            settings: taskSettings,
            task: task,
            hasTaskDelegate: task.delegate != nil && task.delegate !== delegate,
            hasSessionDelegate: delegate != nil
        )
    }

    /// The request to follow `response` with: the first delegate's answer, or `proposed` when
    /// there is no delegate (nil: deliver the redirect itself).
    private func redirectDecision(
        _ response: HTTPResponse,
        _ proposed: HTTPRequest,
        _ task: SessionTask
    ) async -> HTTPRequest? {
        guard let first = task.delegate ?? delegate else { return proposed }
        return await offLoop {
            await first.session(self, task: task, willPerformHTTPRedirection: response, newRequest: proposed)
        }
    }

    /// Performs what the task's machine asked for besides its action. A connection that NTLM or
    /// Negotiate authenticated (the response `reader` reads) stays this task's: servers such as
    /// IIS take its later requests as the user's, whoever sends them, unless the server says it
    /// does not (`Persistent-Auth: false`, Microsoft's header).
    private func perform(_ effects: [TaskEffect], reading reader: (any ResponseReader)?) async {
        if effects.contains(where: \.authenticatesConnection),
            reader?.response?.headers["Persistent-Auth"]?.lowercased() != "false"
        {
            reader?.retireConnection()
        }
        await perform(effects)
    }

    /// Sends the machine's request over what the pool gives (`preferring` this connection), or a
    /// connection opened for it, or, when its route is a tunnel the pool has no connection
    /// through, starts the tunnel.
    private func send(
        _ exchange: TaskStateMachine.Exchange,
        _ machine: inout TaskStateMachine,
        _ opening: inout OpeningInProgress,
        _ task: SessionTask,
        _ deadline: ContinuousClock.Instant,
        _ preferring: Connection?
    ) async throws -> (TaskStateMachine.Action, (any ResponseReader)?) {
        switch try await grant(for: exchange, deadline: deadline, preferring: preferring) {
        case .carrier(let carrier):
            return try await send(exchange, over: carrier, &machine, task, deadline)
        case .open(let slot):
            guard case .tunnel = exchange.route else {
                opening.step = startStep { [self] in
                    .carrier(try await carrier(opening: slot, for: task, deadline: deadline, asking: $0), exchange)
                }
                return try await awaitOpening(&opening, &machine, task, deadline)
            }
            opening.tunnel = TunnelOpening(slot)
            return (machine.tunnelNeeded(known: knownTunnelAttempt(for: exchange)), nil)
        }
    }

    /// Starts the step that sends a tunnel's next `CONNECT`.
    private func startConnect(
        _ request: TaskStateMachine.TunnelRequest,
        _ opening: inout OpeningInProgress,
        _ task: SessionTask,
        _ deadline: ContinuousClock.Instant
    ) async {
        let kept = await opening.tunnel?.takeKept()
        opening.step = startStep { [self] in
            try await connectTunnel(request, on: kept, for: task, deadline: deadline, asking: $0)
        }
    }

    /// Starts the step that begins TLS to the origin in the open tunnel and gives the connection
    /// to the pool, for `exchange`.
    private func startTLS(
        inTunnelFor exchange: TaskStateMachine.Exchange,
        _ opening: inout OpeningInProgress,
        _ task: SessionTask
    ) throws {
        guard let tunnel = opening.tunnel else { throw SesameError(.internalError, "a tunnel with no slot") }
        opening.tunnel = nil
        opening.step = startStep { [self] in
            .carrier(try await carrier(through: tunnel, for: task, asking: $0), exchange)
        }
    }

    /// Starts a step of the driver that opens a connection beside it.
    private func startStep(
        _ step: @escaping @Sendable (ConnectionOpening) async throws -> ConnectionOpening.Outcome
    ) -> ConnectionOpening {
        ConnectionOpening(on: loop, discard: { [pool] outcome in Self.giveBack(outcome, to: pool) }, step: step)
    }

    /// What a step came to when no driver takes it: the lease, the stream slot or the proxy's
    /// connection goes back.
    private static func giveBack(_ outcome: ConnectionOpening.Outcome, to pool: ConnectionPool) {
        switch outcome {
        case .carrier(.http1(let lease), _): pool.release(lease, reusable: false)
        case .carrier(.http2(let connection, _), _): connection.cancelReservation()
        case .tunnelAnswer(_, let connection, _, _): Task { await connection.close() }
        }
    }

    /// Waits for the step opening a connection: a challenge its handshake raises goes to the
    /// machine; a carrier carries the exchange; a proxy's answer to `CONNECT` goes to the machine.
    private func awaitOpening(
        _ opening: inout OpeningInProgress,
        _ machine: inout TaskStateMachine,
        _ task: SessionTask,
        _ deadline: ContinuousClock.Instant
    ) async throws -> (TaskStateMachine.Action, (any ResponseReader)?) {
        guard let step = opening.step else { throw SesameError(.internalError, "no connection is being opened") }
        switch await step.next() {
        case .asks(let space):
            return (machine.handshakeChallenged(space), nil)
        case .finished(.failure) where Task.isCancelled:
            opening.step = nil
            throw CancellationError()
        case .finished(let result):
            opening.step = nil
            switch try result.get() {
            case .carrier(let carrier, let exchange):
                return try await send(exchange, over: carrier, &machine, task, deadline)
            case .tunnelAnswer(let response, let connection, let leftover, let reusable):
                opening.tunnel?.answered = (connection, leftover, reusable)
                return (machine.tunnelAnswered(response), nil)
            }
        }
    }

    /// Sends the machine's request over `carrier`, with the cookies the store has for it, and
    /// stores the cookies its response sets (not a forwarding proxy's 407: proxies do not set
    /// cookies for origins). Returns what the machine makes of the answer, and its reader.
    private func send(
        _ exchange: TaskStateMachine.Exchange,
        over carrier: ConnectionPool.Carrier,
        _ machine: inout TaskStateMachine,
        _ task: SessionTask,
        _ deadline: ContinuousClock.Instant
    ) async throws -> (TaskStateMachine.Action, (any ResponseReader)?) {
        let cookies = machine.request.handlesCookies && configuration.handlesCookies ? configuration.cookieStore : nil
        var wire = exchange.request
        if let cookies, !wire.headers.contains("Cookie"), let header = cookies.cookieHeader(for: wire.url) {
            wire.headers.add(name: "Cookie", value: header)
        }
        let sent: any ResponseReader
        do {
            sent = try await send(wire, exchange, over: carrier, task: task, deadline: deadline)
        } catch let failure as TaskStateMachine.SendFailure {
            return (machine.sendFailed(failure), nil)
        }
        guard let response = sent.response else { throw SesameError(.protocolError, "no response head") }
        if let cookies, !(response.status == 407 && exchange.forwardProxy != nil) {
            cookies.store(setCookieFields: response.headers.values(for: "Set-Cookie"), for: wire.url)
        }
        return (machine.responseHead(response), sent)
    }

    /// Waits for a token other than `rejected` at the session's token source.
    private func refreshToken(rejecting rejected: IssuedToken, for origin: Origin) async throws {
        guard let tokenSource else {
            throw SesameError(.internalError, "a token refresh without a token source")
        }
        _ = try await tokenSource.refreshed(rejecting: rejected.value, generation: rejected.generation, for: origin)
    }

    /// Hands the final response to the task (and its delegates), then its body to `sink`.
    private func stream(
        _ reader: any ResponseReader,
        of response: HTTPResponse,
        _ task: SessionTask,
        _ notifyingDelegates: Bool,
        _ expecting: ((Int) -> Void)?,
        _ check: DigestBodyCheck?,
        _ sink: @escaping ([UInt8]) async throws -> Void
    ) async throws {
        task.update(response: response)
        if notifyingDelegates, let first = task.delegate ?? delegate,
            await offLoop({ await first.session(self, task: task, didReceive: response) }) == .cancel
        {
            throw SesameError(.cancelled, "the delegate cancelled the task at the response")
        }
        if let expecting, let length = reader.bodyLength { expecting(length) }
        // A cancelled task stops at its next piece, also when the pieces are already here (an
        // HTTP/2 stream's are queued: taking one does not wait, so nothing else would notice).
        while true {
            try Task.checkCancellation()
            guard let chunk = try await reader.next() else { break }
            task.received(chunk.count)
            check?.update(chunk)
            try await sink(chunk)
        }
        try check?.verify()
        if !reader.trailers.isEmpty {
            var complete = response
            complete.trailers = reader.trailers
            task.update(response: complete)
        }
    }

    /// The route of the machine's next request and the credentials the session already keeps for it.
    private func routing(for machine: TaskStateMachine) throws -> TaskStateMachine.Routing {
        let (route, proxyCredential) = try proxyRouter.route(for: machine.origin)
        var routing = TaskStateMachine.Routing(route: route, proxyCredential: proxyCredential)
        if case .forward(let proxy) = route, machine.wantsKnownAttempt(forProxy: proxy) {
            routing.knownProxyAttempt = proxyAuthorizations.withLock { $0[proxy] }
        }
        let url = machine.request.url
        if machine.wantsPreemptiveAttempt, let known = preemptive.attempt(for: url, origin: machine.origin),
            Self.userInfoAllows(known.credential, in: url)
        {
            routing.preemptive = known
        }
        return routing
    }

    /// A user and password in the request's URL are the caller's choice for this request: a
    /// credential kept from earlier requests goes out preemptively only when the URL names none,
    /// or names that one.
    static func userInfoAllows(_ credential: Credential, in url: URL) -> Bool {
        guard let user = url.user(percentEncoded: false) else { return true }
        return user == credential.user && url.password(percentEncoded: false) == credential.password
    }

    /// The origin and origin-form request target of a URL Sesame can request.
    private func validatedParts(of url: URL) throws -> (origin: Origin, target: String) {
        let parts = urlParts.parts(of: url)
        guard let origin = parts.origin else {
            throw SesameError(.unsupportedURL, "'\(url.redactedDescription)' is not an absolute http or https URL")
        }
        return (origin, parts.target)
    }
}

/// Runs `body` on the global concurrent executor: user code (delegates, sinks that may block)
/// never runs on the event loop's thread.
func offLoop<T: Sendable>(_ body: () async -> T) async -> T {
    await withTaskExecutorPreference(globalConcurrentExecutor) { await body() }
}

/// What a task's driver holds while it opens a connection: the tunnel being set up (the pool's
/// slot, the proxy's connection), and the step running beside the driver.
struct OpeningInProgress {
    var tunnel: TunnelOpening?
    var step: ConnectionOpening?
}
