import Foundation

extension Session {
    /// Runs `task` to its final response, following redirects, and streams the body into `sink`.
    func run(
        _ task: SessionTask,
        notifyingDelegates: Bool = false,
        sink: @escaping ([UInt8]) async throws -> Void
    ) async throws -> HTTPResponse {
        defer { task.complete() }
        let deadline = ContinuousClock.now + configuration.resourceTimeout
        do {
            // The exchange runs on the event loop's thread: its awaits on the connection then
            // resume without a thread hop. Delegates are called back on the global executor.
            return try await withTaskExecutorPreference(loop) {
                try await follow(task, deadline: deadline, notifyingDelegates: notifyingDelegates, sink: sink)
            }
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
        sink: @escaping ([UInt8]) async throws -> Void
    ) async throws -> HTTPResponse {
        var request = try validated(task.originalRequest)
        var redirects = 0
        let first = task.delegate ?? delegate
        while true {
            task.update(request: request)
            try Task.checkCancellation()
            let reader = try await send(request, deadline: deadline)
            guard let response = reader.response else {
                throw SesameError(.protocolError, "no response head")
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
                    request = try validated(decided, strippingCredentialsFrom: request)
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
            while let chunk = try await reader.next() {
                task.received(chunk.count)
                try await sink(chunk)
            }
            return response
        }
    }

    /// One exchange, sent again once on a fresh connection when a reused one proves to be closed.
    private func send(_ request: HTTPRequest, deadline: ContinuousClock.Instant) async throws -> ResponseBodyReader {
        guard let origin = Origin(request.url) else {
            throw SesameError(.unsupportedURL, "'\(request.url.redactedDescription)' is not an http or https URL")
        }
        var attempt = 0
        while true {
            attempt += 1
            let lease = try await pool.acquire(origin)
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
                    on: lease,
                    pool: pool,
                    configuration: configuration,
                    deadline: deadline
                )
            } catch let stale as HTTP1Exchange.StaleConnection {
                let replayable = request.body?.isReplayable ?? true
                guard attempt == 1, request.isIdempotent, replayable else { throw stale.underlying }
            }
        }
    }

    /// Checks the URL; when following a redirect to another origin, credentials never go along,
    /// even when a delegate put them back.
    private func validated(
        _ request: HTTPRequest,
        strippingCredentialsFrom previous: HTTPRequest? = nil
    ) throws
        -> HTTPRequest
    {
        guard Origin(request.url) != nil else {
            throw SesameError(
                .unsupportedURL,
                "'\(request.url.redactedDescription)' is not an absolute http or https URL"
            )
        }
        var request = request
        if let previous, !RedirectPolicy.sameOrigin(previous.url, request.url) {
            for name in RedirectPolicy.credentialHeaders { request.headers.remove(name: name) }
        }
        return request
    }
}

/// Runs `body` on the global concurrent executor: user code (delegates, sinks that may block)
/// never runs on the event loop's thread.
func offLoop<T: Sendable>(_ body: () async -> T) async -> T {
    await withTaskExecutorPreference(globalConcurrentExecutor) { await body() }
}
