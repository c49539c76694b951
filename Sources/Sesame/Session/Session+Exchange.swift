import FoundationEssentials
import Glibc

extension Session {
    /// One attempt at an exchange over `carrier`: an HTTP/2 stream or an HTTP/1.1 connection.
    /// - Throws: ``TaskStateMachine/SendFailure`` when the request got no answer for a reason
    ///   sending it again may cure (the task's state machine decides whether it is sent again).
    func send(
        _ request: HTTPRequest,
        _ exchange: TaskStateMachine.Exchange,
        over carrier: ConnectionPool.Carrier,
        task: SessionTask,
        deadline: ContinuousClock.Instant
    ) async throws -> any ResponseReader {
        let origin = exchange.routedOrigin
        let progress = bodyProgress(for: request, task: task)
        switch carrier {
        case .http1(let lease):
            observeConnected(lease.connection, origin: origin, reused: lease.isReused)
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
                throw TaskStateMachine.SendFailure.staleConnection(stale.underlying)
            }
        case .http2(let connection, let reused):
            observeConnected(connection.connection, origin: origin, reused: reused)
            do {
                return try await HTTP2Exchange.send(
                    request,
                    target: exchange.target,
                    on: connection,
                    settings: exchangeSettings,
                    deadline: deadline,
                    progress: progress
                )
            } catch let unprocessed as HTTP2Exchange.Unprocessed {
                if unprocessed.requiresHTTP1 { pool.speaksHTTP1(origin) }
                throw TaskStateMachine.SendFailure.unprocessed(
                    unprocessed,
                    connection: connection,
                    reused: reused
                )
            }
        }
    }

    private func observeConnected(_ connection: Connection, origin: Origin, reused: Bool) {
        guard let observer = configuration.eventObserver else { return }
        observer(
            .connected(origin: origin.description, remoteAddress: connection.remoteAddressDescription, reused: reused)
        )
        if !reused, let info = connection.tlsInfo {
            observer(.tlsEstablished(origin: origin.description, info: info))
        }
    }

    /// Counts the body bytes `task` sends and tells its first delegate; nil when there is no body
    /// or no delegate to tell (the count then stays with the task alone).
    private func bodyProgress(for request: HTTPRequest, task: SessionTask) -> BodyProgress? {
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

extension ExchangeSettings {
    /// What an exchange takes from `configuration`: headers to add, the request timeout, the
    /// decoding limit, and the heads reported to the event observer.
    init(_ configuration: SessionConfiguration) {
        var added = Array(configuration.defaultHeaders)
        if configuration.decodesContent {
            added.append(HTTPHeaders.Field(name: "Accept-Encoding", value: BodyDecoding.acceptEncoding))
        }
        var onWireEvent: (@Sendable (WireEvent) -> Void)?
        if let observer = configuration.eventObserver {
            onWireEvent = { @Sendable event in
                switch event {
                case .streamOpened(let origin, let id): observer(.streamOpened(origin: origin, streamID: id))
                case .requestHeadSent(let head): observer(.requestHeadSent(head))
                case .responseHeadReceived(let head): observer(.responseHeadReceived(head))
                }
            }
        }
        self.init(
            addedHeaders: added,
            requestTimeout: configuration.requestTimeout,
            decodedBodyLimit: configuration.decodesContent ? configuration.maximumDecodedBodySize : nil,
            onWireEvent: onWireEvent,
            expectContinueTimeout: configuration.expectContinueTimeout
        )
    }
}
