/// Keep-alive connections of one session, per origin: reuse, a per-origin limit with waiting in
/// order, and closing of connections left idle past the idle timeout.
///
/// A session owns its pool, so connections are never shared between sessions (whose trust
/// settings and handshake hooks may differ).
final class ConnectionPool: Sendable {
    struct Lease: Sendable {
        let connection: Connection
        let origin: Origin
        /// True when the connection carried an earlier request (it may have been closed by the server since).
        let isReused: Bool

        /// Lends `connection` out until ``ConnectionPool/release(_:reusable:)``.
        init(lending connection: Connection, origin: Origin, isReused: Bool) {
            self.connection = connection
            self.origin = origin
            self.isReused = isReused
        }
    }

    private enum WaiterOutcome: Sendable {
        case reuse(Connection)
        case connect
    }

    private struct Waiters {
        var continuations: [Int: CheckedContinuation<WaiterOutcome, any Error>] = [:]
        var early: [Int: Result<WaiterOutcome, any Error>] = [:]
        var nextID = 0
        var evictionScheduled = false
    }

    private let machine: LockedValue<PoolStateMachine<Connection>>
    private let waiters = LockedValue(Waiters())
    private let loop: EventLoop
    private let idleTimeout: Duration

    init(limit: Int, idleTimeout: Duration, loop: EventLoop) {
        machine = LockedValue(PoolStateMachine(limit: limit, idleTimeout: idleTimeout))
        self.idleTimeout = idleTimeout
        self.loop = loop
    }

    /// Makes a new connection to an origin (TCP, TLS for https, through its route's proxy) by a
    /// deadline, for whoever acquires it: the layer above decides whom a proxy's challenge or a
    /// handshake's decision goes to, and the pool knows nothing of them.
    typealias Opener = @Sendable (Origin, ContinuousClock.Instant?) async throws -> Connection

    /// A connection to `origin`: `preferring` when it is idle, else an idle one, a new one made
    /// with `open`, or the next one freed, by `deadline` (waiting for a freed one included; past it
    /// the wait ends with ``SesameError/Code/timeout``).
    func acquire(
        _ origin: Origin,
        deadline: ContinuousClock.Instant? = nil,
        preferring: Connection? = nil,
        open: Opener
    ) async throws -> Lease {
        let id = waiters.withLock { waiters -> Int in
            waiters.nextID += 1
            return waiters.nextID
        }
        // A kept-alive connection known to be closed (its server closed it while it was idle) is
        // not handed out: a request that cannot be sent again (a POST) would fail on it.
        let (action, expired) = machine.withLock {
            $0.acquire(origin, waiter: id, now: loop.now, preferring: preferring, isOpen: { !$0.isKnownClosed })
        }
        close(expired)
        switch action {
        case .reuse(let connection):
            return Lease(lending: connection, origin: origin, isReused: true)
        case .connect:
            return try await openConnection(origin, deadline, open)
        case .wait:
            // The wait ends at the deadline as if cancelled, unless a connection came first.
            let timer = deadline.map { deadline in
                LoopTimer(on: loop, at: deadline) { [self] in
                    guard machine.withLock({ $0.cancelWaiter(origin, id) }) else { return }
                    deliver(id, .failure(SesameError(.timeout, "no connection to \(origin) was free in time")))
                }
            }
            defer { timer?.cancel() }
            let outcome = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let early = waiters.withLock { waiters -> Result<WaiterOutcome, any Error>? in
                        if let early = waiters.early.removeValue(forKey: id) { return early }
                        waiters.continuations[id] = continuation
                        return nil
                    }
                    if let early { continuation.resume(with: early) }
                }
            } onCancel: {
                if machine.withLock({ $0.cancelWaiter(origin, id) }) {
                    deliver(
                        id,
                        .failure(SesameError(.cancelled, "waiting for a connection to \(origin) was cancelled"))
                    )
                }
            }
            switch outcome {
            case .reuse(let connection): return Lease(lending: connection, origin: origin, isReused: true)
            case .connect: return try await openConnection(origin, deadline, open)
            }
        }
    }

    /// A lease on a connection opened outside the pool (one that was to learn whether its origin
    /// speaks HTTP/2, and speaks HTTP/1.1): from here on it is the pool's like any other.
    func adopt(_ connection: Connection, for origin: Origin) -> Lease {
        machine.withLock { $0.adopted(origin) }
        return Lease(lending: connection, origin: origin, isReused: false)
    }

    /// Gives a leased connection back. A connection that is not reusable is closed.
    func release(_ lease: Lease, reusable: Bool) {
        if !reusable { close([lease.connection]) }
        let handOff = machine.withLock {
            $0.release(lease.origin, lease.connection, reusable: reusable, now: loop.now)
        }
        if let handOff {
            dispatch(handOff)
        } else if reusable {
            scheduleEviction()
        }
    }

    /// The pool's connections over every origin, and the most idle ones any origin holds (for tests).
    var totals: (idle: Int, leased: Int, opening: Int, waiting: Int, largestIdle: Int) {
        machine.withLock { machine in
            let totals = machine.totals
            return (totals.idle, totals.leased, totals.opening, totals.waiting, machine.largestIdleCount)
        }
    }

    /// How many idle connections are known to be closed (for tests).
    var idleConnectionsKnownClosed: Int { machine.withLock { $0.idleConnections.filter(\.isKnownClosed).count } }

    /// Closes every idle connection (leased ones close when their requests end).
    func closeIdleConnections() {
        close(machine.withLock { $0.removeAllIdle() })
    }

    private func openConnection(
        _ origin: Origin,
        _ deadline: ContinuousClock.Instant?,
        _ open: Opener
    ) async throws -> Lease {
        do {
            let connection = try await open(origin, deadline)
            machine.withLock { $0.opened(origin) }
            return Lease(lending: connection, origin: origin, isReused: false)
        } catch {
            if let handOff = machine.withLock({ $0.openFailed(origin) }) { dispatch(handOff) }
            throw error
        }
    }

    private func dispatch(_ handOff: PoolStateMachine<Connection>.HandOff) {
        switch handOff {
        case .reuse(let waiter, let connection): deliver(waiter, .success(.reuse(connection)))
        case .connect(let waiter): deliver(waiter, .success(.connect))
        }
    }

    private func deliver(_ waiter: Int, _ outcome: Result<WaiterOutcome, any Error>) {
        let continuation = waiters.withLock { waiters -> CheckedContinuation<WaiterOutcome, any Error>? in
            if let continuation = waiters.continuations.removeValue(forKey: waiter) { return continuation }
            waiters.early[waiter] = outcome
            return nil
        }
        continuation?.resume(with: outcome)
    }

    private func scheduleEviction() {
        let needed = waiters.withLock { waiters -> Bool in
            if waiters.evictionScheduled { return false }
            waiters.evictionScheduled = true
            return true
        }
        guard needed else { return }
        let timeout = idleTimeout
        loop.execute { [weak self, loop] in
            _ = loop.scheduleTimer(after: timeout) { [weak self] in self?.evict() }
        }
    }

    private func evict() {
        waiters.withLock { $0.evictionScheduled = false }
        let (expired, more) = machine.withLock { machine in
            (machine.evictExpired(now: loop.now), machine.hasIdleConnections)
        }
        close(expired)
        if more { scheduleEviction() }
    }

    private func close(_ connections: [Connection]) {
        guard !connections.isEmpty else { return }
        Task {
            for connection in connections { await connection.close() }
        }
    }
}
