/// The connections of one session, per origin, over HTTP/1.1 and HTTP/2: what carries each
/// request, run over one ``PoolStateMachine``.
///
/// A request that may use HTTP/2 claims a stream: on a connection with a free slot, else by
/// opening a connection (one at a time per origin) that learns whether the origin speaks
/// HTTP/2; an origin that does not gets HTTP/1.1 connections from then on. HTTP/1.1
/// connections are kept alive, reused most recently used first, opened within the per-origin
/// limit, waited for in order, and closed once idle past the idle timeout.
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

    /// What carries one request: a leased HTTP/1.1 connection, or a stream slot on an HTTP/2 one.
    enum Carrier {
        case http1(Lease)
        /// `reused`: the connection carried streams before this one.
        case http2(HTTP2Connection, reused: Bool)
    }

    /// How a request may use HTTP/2.
    enum HTTP2Use {
        /// Over TLS, when ALPN picks `h2`.
        case negotiated
        /// Over plain TCP from the first byte (h2c).
        case priorKnowledge
    }

    /// What the pool gives a request: a carrier, or the right to open the origin's next
    /// connection, which the caller makes (TCP, TLS, a proxy tunnel: whom a proxy's challenge or a
    /// handshake's decision goes to is the caller's business, not the pool's) and hands back with
    /// ``opened(_:_:)``.
    enum Grant {
        case carrier(Carrier)
        case open(OpeningSlot)
    }

    /// The right to open one connection to an origin. Given back by ``ConnectionPool/opened(_:_:)``
    /// or ``ConnectionPool/openFailed(_:)``; one dropped unused counts as a failed open, so a task
    /// that ends while it opens never holds the origin's slot.
    final class OpeningSlot: Sendable {
        let origin: Origin
        /// The connection offers `h2` in ALPN: it learns whether the origin speaks HTTP/2.
        var offersHTTP2: Bool { http2 != nil }
        fileprivate let http2: HTTP2Use?
        private let pool: ConnectionPool
        private let settled = LockedValue(false)

        fileprivate init(_ origin: Origin, http2: HTTP2Use?, pool: ConnectionPool) {
            self.origin = origin
            self.http2 = http2
            self.pool = pool
        }

        /// True the first time only: a slot is given back once.
        fileprivate func settle() -> Bool {
            settled.withLock { settled in
                defer { settled = true }
                return !settled
            }
        }

        deinit {
            if settle() { pool.failedOpen(origin, http2: http2) }
        }
    }

    /// What a request waits for, as its errors name it.
    private enum Awaited: String {
        case connection = "connection"
        case stream = "HTTP/2 stream"

        var withArticle: String { self == .connection ? "a connection" : "an HTTP/2 stream" }
    }

    /// What a waiting request is told.
    private enum WaiterOutcome: Sendable {
        /// An HTTP/1.1 connection handed over from a request that ended.
        case reuse(Connection)
        /// A slot to open an HTTP/1.1 connection of its own.
        case connect
        /// Something changed for the origin's HTTP/2 connections: claim again.
        case claimAgain
    }

    private struct Waiters {
        var continuations: [Int: CheckedContinuation<WaiterOutcome, any Error>] = [:]
        /// Outcomes that came before their waiter suspended.
        var early: [Int: Result<WaiterOutcome, any Error>] = [:]
        var nextID = 0
        var evictionScheduled = false
    }

    private let machine: LockedValue<PoolStateMachine<Connection, HTTP2Connection>>
    private let waiters = LockedValue(Waiters())
    private let loop: EventLoop
    private let idleTimeout: Duration
    /// An HTTP/2 connection idle this long proves it is alive (a PING) before it carries a request.
    private let idlePingThreshold: Duration?
    private let pingTimeout: Duration

    init(
        limit: Int,
        idleTimeout: Duration,
        idlePingThreshold: Duration? = nil,
        pingTimeout: Duration = .seconds(5),
        loop: EventLoop
    ) {
        machine = LockedValue(PoolStateMachine(limit: limit, idleTimeout: idleTimeout))
        self.idleTimeout = idleTimeout
        self.idlePingThreshold = idlePingThreshold
        self.pingTimeout = pingTimeout
        self.loop = loop
    }

    /// The carrier for the next request to `origin`: a stream when `http2` allows HTTP/2 and the
    /// origin speaks it, else an HTTP/1.1 connection (`preferring` when it is idle); or the slot
    /// to open the origin's next connection. Waits, up to `deadline`, for another request's
    /// connection to open or to come free. `avoiding`: an HTTP/2 connection that refused the
    /// request just now.
    func carrier(
        for origin: Origin,
        http2: HTTP2Use?,
        deadline: ContinuousClock.Instant,
        avoiding: AnyObject? = nil,
        preferring: Connection? = nil
    ) async throws -> Grant {
        guard let http2 else { return try await acquire(origin, deadline: deadline, preferring: preferring) }
        while true {
            let id = nextWaiterID()
            let claim = machine.withLock {
                $0.claimStream(origin, waiter: id, avoiding: avoiding, isUsable: \.isUsable, reserve: { $0.reserve() })
            }
            switch claim {
            case .stream(let connection):
                guard await isAlive(connection) else { continue }
                return .carrier(.http2(connection, reused: true))
            case .http1:
                return try await acquire(origin, deadline: deadline, preferring: preferring)
            case .open:
                return .open(OpeningSlot(origin, http2: http2, pool: self))
            case .wait:
                _ = try await wait(origin, id, deadline: deadline, for: .stream)
            }
        }
    }

    /// The connection opened for `slot` carries the request: an HTTP/1.1 one is leased to it;
    /// one that offered `h2` tells whether the origin speaks HTTP/2 (an origin that does not
    /// gets HTTP/1.1 connections from then on, this one first).
    func opened(_ slot: OpeningSlot, _ connection: Connection) async throws -> Carrier {
        let origin = slot.origin
        guard slot.settle() else {
            await connection.close()
            throw SesameError(.internalError, "a connection slot to \(origin) was used twice")
        }
        guard let http2 = slot.http2 else {
            machine.withLock { $0.opened(origin) }
            return .http1(Lease(lending: connection, origin: origin, isReused: false))
        }
        guard http2 == .priorKnowledge || connection.tlsInfo?.applicationProtocol == "h2" else {
            wake(machine.withLock { $0.learnedHTTP1(origin, adopting: true) })
            return .http1(Lease(lending: connection, origin: origin, isReused: false))
        }
        let multiplexed: HTTP2Connection
        do {
            multiplexed = try HTTP2Connection(
                connection,
                origin: origin,
                idleTimeout: idleTimeout,
                onRetire: { [weak self] in self?.retired($0) },
                onSlotFreed: { [weak self] in self?.slotFreed(on: $0) }
            )
        } catch {
            failedOpen(origin, http2: http2)
            await connection.close()
            throw error
        }
        multiplexed.start()
        _ = multiplexed.reserve()
        wake(machine.withLock { $0.streamConnectionOpened(origin, multiplexed) })
        return .http2(multiplexed, reused: false)
    }

    /// No connection could be opened for `slot`: the next request waiting for the origin may try.
    func openFailed(_ slot: OpeningSlot) {
        if slot.settle() { failedOpen(slot.origin, http2: slot.http2) }
    }

    private func failedOpen(_ origin: Origin, http2: HTTP2Use?) {
        if http2 != nil {
            wake(machine.withLock { $0.streamConnectionFailed(origin) })
        } else if let handOff = machine.withLock({ $0.openFailed(origin) }) {
            dispatch(handOff)
        }
    }

    /// A connection that sat idle proves it is alive first (a PING), so that the request does
    /// not go into a connection a NAT or the server dropped in silence. False when it failed
    /// (it is then retired, and its reservation given back).
    private func isAlive(_ connection: HTTP2Connection) async -> Bool {
        guard let idlePingThreshold, let idle = connection.takeIdleSpan(), idle >= idlePingThreshold else {
            return true
        }
        do {
            try await connection.ping(timeout: pingTimeout)
            return true
        } catch {
            connection.cancelReservation()
            return false
        }
    }

    /// An HTTP/1.1 connection to `origin`: `preferring` when it is idle, else an idle one, the
    /// slot to open a new one, or the next one freed, by `deadline` (waiting for a freed one
    /// included; past it the wait ends with ``SesameError/Code/timeout``).
    private func acquire(
        _ origin: Origin,
        deadline: ContinuousClock.Instant?,
        preferring: Connection?
    ) async throws -> Grant {
        let id = nextWaiterID()
        // A kept-alive connection known to be closed (its server closed it while it was idle) is
        // not handed out: a request that cannot be sent again (a POST) would fail on it.
        let (action, expired) = machine.withLock {
            $0.acquire(origin, waiter: id, now: loop.now, preferring: preferring, isOpen: { !$0.isKnownClosed })
        }
        close(expired)
        switch action {
        case .reuse(let connection):
            return .carrier(.http1(Lease(lending: connection, origin: origin, isReused: true)))
        case .connect:
            return .open(OpeningSlot(origin, http2: nil, pool: self))
        case .wait:
            switch try await wait(origin, id, deadline: deadline, for: .connection) {
            case .reuse(let connection):
                return .carrier(.http1(Lease(lending: connection, origin: origin, isReused: true)))
            case .connect, .claimAgain:
                return .open(OpeningSlot(origin, http2: nil, pool: self))
            }
        }
    }

    /// Suspends waiter `id` until it is told something, or its deadline passes, or its task is
    /// cancelled (both end the wait as if cancelled, unless the outcome came first).
    private func wait(
        _ origin: Origin,
        _ id: Int,
        deadline: ContinuousClock.Instant?,
        for awaited: Awaited
    ) async throws -> WaiterOutcome {
        let timer = deadline.map { deadline in
            LoopTimer(on: loop, at: deadline) { [self] in
                guard machine.withLock({ $0.cancelWaiter(origin, id) }) else { return }
                deliver(id, .failure(SesameError(.timeout, "no \(awaited.rawValue) to \(origin) was free in time")))
            }
        }
        defer { timer?.cancel() }
        return try await withTaskCancellationHandler {
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
                    .failure(SesameError(.cancelled, "waiting for \(awaited.withArticle) to \(origin) was cancelled"))
                )
            }
        }
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

    /// The origin speaks HTTP/1.1 only (it answered a stream with HTTP_1_1_REQUIRED).
    func speaksHTTP1(_ origin: Origin) {
        wake(machine.withLock { $0.learnedHTTP1(origin) })
    }

    /// An HTTP/2 connection takes no new stream (GOAWAY, failure, idle close): forgotten.
    private func retired(_ connection: HTTP2Connection) {
        wake(machine.withLock { $0.retired(connection.origin, connection) })
    }

    /// A stream slot came free on `connection`.
    private func slotFreed(on connection: HTTP2Connection) {
        wake(machine.withLock { $0.slotFreed(connection.origin) })
    }

    /// Closes every idle connection: HTTP/1.1 ones at once, HTTP/2 ones that carry no stream
    /// (the others close when their streams end).
    func closeIdleConnections() {
        let (idle, multiplexed) = machine.withLock { ($0.removeAllIdle(), $0.multiplexedConnections) }
        close(idle)
        for connection in multiplexed where connection.activeStreams == 0 { connection.retire() }
    }

    /// The pool's HTTP/1.1 connections over every origin, and the most idle ones any origin
    /// holds (for tests).
    var totals: (idle: Int, leased: Int, opening: Int, waiting: Int, largestIdle: Int) {
        machine.withLock { machine in
            let totals = machine.totals
            return (totals.idle, totals.leased, totals.opening, totals.waiting, machine.largestIdleCount)
        }
    }

    /// How many HTTP/2 connections the pool holds (for tests).
    var http2ConnectionCount: Int { machine.withLock { $0.multiplexedConnections.count } }

    /// How many idle connections are known to be closed (for tests).
    var idleConnectionsKnownClosed: Int { machine.withLock { $0.idleConnections.filter(\.isKnownClosed).count } }

    private func nextWaiterID() -> Int {
        waiters.withLock { waiters -> Int in
            waiters.nextID += 1
            return waiters.nextID
        }
    }

    private func dispatch(_ handOff: PoolStateMachine<Connection, HTTP2Connection>.HandOff) {
        switch handOff {
        case .reuse(let waiter, let connection): deliver(waiter, .success(.reuse(connection)))
        case .connect(let waiter): deliver(waiter, .success(.connect))
        }
    }

    /// Tells the HTTP/2 waiters of a change: they claim again.
    private func wake(_ ids: [Int]) {
        for id in ids { deliver(id, .success(.claimAgain)) }
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
