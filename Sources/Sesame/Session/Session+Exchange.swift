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
        while true {
            attempt += 1
            let lease = try await pool.acquire(origin, for: task, deadline: deadline)
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
                    deadline: deadline
                )
            } catch let stale as HTTP1Exchange.StaleConnection {
                let replayable = request.body?.isReplayable ?? true
                guard attempt == 1, request.isIdempotent, replayable else { throw stale.underlying }
            }
        }
    }
}
