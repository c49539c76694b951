import Foundation

extension Session {
    /// One exchange, sent again once on a fresh connection when a reused one proves to be closed.
    func send(
        _ request: HTTPRequest,
        _ exchange: TaskStateMachine.Exchange,
        task: SessionTask,
        deadline: ContinuousClock.Instant
    ) async throws -> ResponseBodyReader {
        var origin = exchange.origin
        origin.route = exchange.route
        var attempt = 0
        let progress = bodyProgress(for: request, task: task)
        while true {
            attempt += 1
            let lease = try await pool.acquire(origin, deadline: deadline) { [self] origin, deadline in
                try await openConnection(origin, for: task, deadline: deadline)
            }
            if let observer = configuration.eventObserver {
                let connection = lease.connection
                observer(
                    .connected(
                        origin: origin.description,
                        remoteAddress: connection.remoteAddressDescription,
                        reused: lease.isReused
                    )
                )
                if !lease.isReused, let info = connection.tlsInfo {
                    observer(.tlsEstablished(origin: origin.description, info: info))
                }
            }
            do {
                return try await HTTP1Exchange.send(
                    request,
                    target: exchange.target,
                    on: lease,
                    pool: pool,
                    settings: exchangeSettings,
                    deadline: deadline,
                    progress: progress
                )
            } catch let stale as HTTP1Exchange.StaleConnection {
                let replayable = request.body?.isReplayable ?? true
                guard attempt == 1, request.isIdempotent, replayable else { throw stale.underlying }
            }
        }
    }

    /// Counts the body bytes `task` sends and tells its first delegate; nil when there is no body
    /// or no delegate to tell (the count then stays with the task alone).
    private func bodyProgress(for request: HTTPRequest, task: SessionTask) -> HTTP1Exchange.BodyProgress? {
        guard request.hasBody else { return nil }
        guard let first = task.delegate ?? delegate else {
            return { count in _ = task.sent(count) }
        }
        let expected = request.body?.knownLength.map(Int64.init)
        return { [weak self] count in
            let total = task.sent(count)
            guard let self else { return }
            await offLoop {
                await first.session(
                    self,
                    task: task,
                    didSendBodyData: Int64(count),
                    totalBytesSent: total,
                    totalBytesExpectedToSend: expected
                )
            }
        }
    }
}

extension HTTP1Exchange.Settings {
    /// What an exchange takes from `configuration`: headers to add, the request timeout, the
    /// decoding limit, and the heads reported to the event observer.
    init(_ configuration: SessionConfiguration) {
        var added = Array(configuration.defaultHeaders)
        if configuration.decodesContent {
            added.append(HTTPHeaders.Field(name: "Accept-Encoding", value: "gzip, deflate"))
        }
        var onWireEvent: (@Sendable (HTTP1Exchange.WireEvent) -> Void)?
        if let observer = configuration.eventObserver {
            onWireEvent = { @Sendable event in
                switch event {
                case .requestHeadSent(let head): observer(.requestHeadSent(head))
                case .responseHeadReceived(let head): observer(.responseHeadReceived(head))
                }
            }
        }
        self.init(
            addedHeaders: added,
            requestTimeout: configuration.requestTimeout,
            decodedBodyLimit: configuration.decodesContent ? configuration.maximumDecodedBodySize : nil,
            onWireEvent: onWireEvent
        )
    }
}
