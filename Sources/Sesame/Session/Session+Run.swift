import Foundation

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
        let deadline = ContinuousClock.now + configuration.resourceTimeout
        do {
            // The exchange runs where the caller runs: its writes and reads take the event loop's
            // place while the loop waits (`EventLoop.runOnLoop`), and a quick answer is waited for
            // on the caller's thread (`Connection+InlineWait.swift`). A caller running on the loop
            // itself makes no thread hop at all.
            return try await follow(
                task,
                deadline: deadline,
                notifyingDelegates: notifyingDelegates,
                expecting: expecting,
                sink: sink
            )
        } catch let error as SesameError
            where (error.code == .connectTimeout || error.code == .timeout) && ContinuousClock.now >= deadline
        {
            // The task's own deadline ended it, wherever it was (connecting, waiting, reading).
            throw SesameError(.timeout, "the task did not finish within the resource timeout (\(error.detail))")
        } catch is CancellationError {
            throw SesameError(.cancelled, "the task was cancelled")
        } catch let error as SesameError where error.code == .cancelled && task.isCancelled {
            throw SesameError(.cancelled, "the task was cancelled")
        }
    }

    private func follow(
        _ task: SessionTask,
        deadline: ContinuousClock.Instant,
        notifyingDelegates: Bool,
        expecting: ((Int) -> Void)?,
        sink: @escaping ([UInt8]) async throws -> Void
    ) async throws -> HTTPResponse {
        // The task's current request is the original one until a redirect changes it.
        var request = task.originalRequest
        var (origin, target) = try validatedParts(of: request.url)
        var redirects = 0
        let first = task.delegate ?? delegate
        // Made when a credential is first sent or asked for: most requests need none.
        var resolver = ChallengeResolver?.none
        var attempt: ChallengeResolver.Attempt?
        // Made only for requests that go through a forwarding proxy.
        var proxyResolver = ChallengeResolver?.none
        var proxyAttempt: (proxy: ProxyEndpoint, attempt: ChallengeResolver.Attempt)?
        while true {
            try Task.checkCancellation()
            let (route, proxyCredential) = try proxyRouter.route(for: origin)
            var wire = request
            var forwardProxy: ProxyEndpoint? = nil
            if case .forward(let proxy) = route { forwardProxy = proxy }
            if let forwardProxy {
                // A password written into the proxy's URL is consent to send it to that proxy.
                if proxyResolver == nil { proxyResolver = makeResolver(for: task, forProxy: true) }
                proxyResolver?.cleartextConsent = CleartextConsent(proxy: forwardProxy, credential: proxyCredential)
                proxyResolver?.bodyIsHashable = request.body?.isHashable ?? true
                if proxyAttempt?.proxy != forwardProxy {
                    proxyAttempt = proxyAuthorizations.withLock { $0[forwardProxy] }.map { (forwardProxy, $0) }
                    if let known = proxyAttempt?.attempt { proxyResolver?.sending(preemptive: known) }
                }
                if let proxyAttempt {
                    let proxyTarget = HTTP1Exchange.requestTarget(of: request.url, route: route, originForm: target)
                    let (value, _) = try proxyAttempt.attempt.authorizer.header(for: request, uri: proxyTarget)
                    wire.headers.replaceOrAdd(name: "Proxy-Authorization", value: value)
                }
            } else {
                // Proxy credentials go only to a forwarding proxy, never to an origin or into a tunnel.
                wire.headers.remove(name: "Proxy-Authorization")
            }
            if attempt == nil, !request.headers.contains("Authorization"),
                let known = preemptive.attempt(for: request.url, origin: origin),
                Self.userInfoAllows(known.credential, in: request.url)
            {
                if resolver == nil { resolver = makeResolver(for: task) }
                resolver?.sending(preemptive: known)
                attempt = known
            }
            var expectation: DigestAuthorizer.Expectation?
            if let attempt {
                let (value, expected) = try attempt.authorizer.header(for: request, uri: target)
                wire.headers.replaceOrAdd(name: "Authorization", value: value)
                expectation = expected
            }
            let cookies = request.handlesCookies && configuration.handlesCookies ? configuration.cookieStore : nil
            if let cookies, !wire.headers.contains("Cookie"), let header = cookies.cookieHeader(for: request.url) {
                wire.headers.add(name: "Cookie", value: header)
            }
            let reader = try await send(wire, to: origin, target: target, route: route, task: task, deadline: deadline)
            guard let response = reader.response else {
                throw SesameError(.protocolError, "no response head")
            }
            // Proxies do not set cookies for origins: a 407 from a forwarding proxy is not stored.
            if let cookies, !(response.status == 407 && forwardProxy != nil) {
                cookies.store(setCookieFields: response.headers.values(for: "Set-Cookie"), for: request.url)
            }
            var bodyCheck: DigestBodyCheck?
            let proxyChallenged = response.status == 407 && forwardProxy != nil
            var outcome: ChallengeOutcome
            if let forwardProxy, proxyResolver != nil, proxyChallenged || proxyAttempt != nil {
                // The proxy's answer first: a 407 is its challenge; anything else means it took
                // what was sent.
                let proxyOutcome = try await resolveChallenges(
                    response,
                    to: request,
                    with: &proxyResolver!,
                    proxy: (forwardProxy, proxyCredential)
                )
                if !proxyChallenged, case .deliver = proxyOutcome { proxyAttempt = nil }
                outcome = proxyChallenged ? proxyOutcome : .deliver
            } else {
                outcome = .deliver
            }
            // Most responses neither challenge nor answer a credential just sent: nothing to resolve.
            if !proxyChallenged && (response.status == 401 || attempt != nil) {
                if resolver == nil { resolver = makeResolver(for: task) }
                resolver?.bodyIsHashable = request.body?.isHashable ?? true
                outcome = try await resolveChallenges(response, to: request, with: &resolver!)
            }
            if case .retry = outcome, !(request.body?.isReplayable ?? true) {
                // A streamed body is gone once sent: the challenge response is the answer.
                configuration.eventObserver?(
                    .challengeHeaderProblem(
                        "a streamed body cannot be sent again with credentials; the \(response.status) is delivered"
                    )
                )
                outcome = .deliver
            }
            switch outcome {
            case .retry(let next):
                await reader.discard()
                if proxyChallenged, let forwardProxy {
                    proxyAttempt = (forwardProxy, next)
                } else {
                    attempt = next
                }
                continue
            case .fail(let error):
                reader.abandon()
                throw error
            case .deliver:
                guard !proxyChallenged else { break }
                do {
                    bodyCheck = try checkAuthenticationInfo(response, attempt: attempt, expectation: expectation)
                } catch {
                    reader.abandon()
                    throw error
                }
                attempt = nil
            }
            if configuration.followsRedirects, let next = RedirectPolicy.nextRequest(after: response, for: request) {
                let decided =
                    if let first {
                        await offLoop {
                            await first.session(
                                self,
                                task: task,
                                willPerformHTTPRedirection: response,
                                newRequest: next
                            )
                        }
                    } else {
                        next
                    }
                if let decided {
                    redirects += 1
                    guard redirects <= configuration.maximumRedirects else {
                        reader.abandon()
                        throw SesameError(
                            .tooManyRedirects,
                            "more than \(configuration.maximumRedirects) redirects, the last to \(decided.url.redactedDescription)"
                        )
                    }
                    await reader.discard()
                    configuration.eventObserver?(.redirected(status: response.status, to: decided.url))
                    (request, origin, target) = try validated(decided, strippingCredentialsFrom: request)
                    task.update(request: request)
                    continue
                }
            }
            task.update(response: response)
            if notifyingDelegates, let first,
                await offLoop({ await first.session(self, task: task, didReceive: response) }) == .cancel
            {
                reader.abandon()
                throw SesameError(.cancelled, "the delegate cancelled the task at the response")
            }
            if let expecting, let length = reader.bodyLength { expecting(length) }
            while let chunk = try await reader.next() {
                task.received(chunk.count)
                bodyCheck?.update(chunk)
                try await sink(chunk)
            }
            try bodyCheck?.verify()
            return response
        }
    }

    /// A user and password in the request's URL are the caller's choice for this request: a
    /// credential kept from earlier requests goes out preemptively only when the URL names none,
    /// or names that one.
    static func userInfoAllows(_ credential: Credential, in url: URL) -> Bool {
        guard let user = url.user(percentEncoded: false) else { return true }
        return user == credential.user && url.password(percentEncoded: false) == credential.password
    }

    /// Checks a Digest response's `Authentication-Info` (a wrong `rspauth` throws; a `nextnonce`
    /// is taken). For `auth-int` the check needs the response body: it is returned to be run once
    /// the body has passed.
    private func checkAuthenticationInfo(
        _ response: HTTPResponse,
        attempt: ChallengeResolver.Attempt?,
        expectation: DigestAuthorizer.Expectation?
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

    /// One exchange, sent again once on a fresh connection when a reused one proves to be closed.
    private func send(
        _ request: HTTPRequest,
        to origin: Origin,
        target: String,
        route: ProxyRoute,
        task: SessionTask,
        deadline: ContinuousClock.Instant
    ) async throws -> ResponseBodyReader {
        var origin = origin
        origin.route = route
        var attempt = 0
        while true {
            attempt += 1
            let lease = try await pool.acquire(origin, for: task, deadline: deadline)
            if let observer = configuration.eventObserver {
                observer(
                    .connected(
                        origin: origin.description,
                        remoteAddress: lease.connection.remoteAddressDescription,
                        reused: lease.isReused
                    )
                )
                if !lease.isReused, let info = lease.connection.tlsInfo {
                    observer(.tlsEstablished(origin: origin.description, info: info))
                }
            }
            do {
                return try await HTTP1Exchange.send(
                    request,
                    target: target,
                    on: lease,
                    pool: pool,
                    settings: exchangeSettings,
                    deadline: deadline
                )
            } catch let stale as HTTP1Exchange.StaleConnection {
                let replayable = request.body?.isReplayable ?? true
                guard attempt == 1, request.isIdempotent, replayable else { throw stale.underlying }
            }
        }
    }

    /// A resolver for `task`'s origins (or, with `forProxy`, its forwarding proxy). A password in
    /// the task's own URL is the caller's consent to send it readable on the wire to that URL's
    /// origin, and only there; a proxy's consent comes from the proxy's URL.
    private func makeResolver(for task: SessionTask, forProxy: Bool = false) -> ChallengeResolver {
        ChallengeResolver(
            maximumFailures: configuration.maximumAuthenticationFailures,
            maximumRoundTrips: configuration.maximumChallengeRoundTrips,
            allowsCleartextPasswords: configuration.allowsCleartextPasswords,
            cleartextConsent: forProxy ? nil : CleartextConsent(requestURL: task.originalRequest.url),
            task: task,
            recordsTraces: configuration.eventObserver != nil
        )
    }

    /// The origin and origin-form request target of a URL Sesame can request.
    private func validatedParts(of url: URL) throws -> (origin: Origin, target: String) {
        let parts = urlParts.parts(of: url)
        guard let origin = parts.origin else {
            throw SesameError(.unsupportedURL, "'\(url.redactedDescription)' is not an absolute http or https URL")
        }
        return (origin, parts.target)
    }

    /// Checks a redirect's URL and returns its origin; when following it to another origin,
    /// credentials never go along, even when a delegate put them back.
    private func validated(
        _ request: HTTPRequest,
        strippingCredentialsFrom previous: HTTPRequest
    ) throws
        -> (HTTPRequest, Origin, String)
    {
        let (origin, target) = try validatedParts(of: request.url)
        var request = request
        if Origin(previous.url) != origin {
            for name in RedirectPolicy.originBoundHeaders { request.headers.remove(name: name) }
        }
        return (request, origin, target)
    }
}

/// Runs `body` on the global concurrent executor: user code (delegates, sinks that may block)
/// never runs on the event loop's thread.
func offLoop<T: Sendable>(_ body: () async -> T) async -> T {
    await withTaskExecutorPreference(globalConcurrentExecutor) { await body() }
}
