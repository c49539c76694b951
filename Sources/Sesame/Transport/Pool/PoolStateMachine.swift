/// Which connection a request gets, as a value-type state machine, for HTTP/1.1 and HTTP/2
/// alike. No I/O here.
///
/// Per origin there are two sub-states:
/// - HTTP/1.1 (`Connection`): reuse an idle keep-alive connection, open a new one within the
///   per-origin limit, or wait in line for the next one freed;
/// - HTTP/2 (`Multiplexed`): a stream slot on a connection that has one, else the task of
///   opening the next connection (one at a time, within the limit), while other requests wait
///   for it to learn the origin's protocol. An origin that answered ALPN with `http/1.1` (or
///   asked for HTTP/1.1 with HTTP_1_1_REQUIRED) is sent to the HTTP/1.1 sub-state from then on,
///   and the connection that found out is counted there.
///
/// The protocol is decided here: ``claimStream(_:waiter:avoiding:isUsable:reserve:)`` answers
/// `.http1` for an origin known to speak HTTP/1.1 only.
struct PoolStateMachine<Connection: AnyObject, Multiplexed: AnyObject> {
    struct Idle {
        let connection: Connection
        let since: ContinuousClock.Instant
    }

    /// An origin's HTTP/2 connections, and what was learned about its protocol.
    private struct Multiplexing {
        var connections: [Multiplexed] = []
        var opening = false
        var speaksHTTP1 = false
        /// Requests waiting for a change (a connection opened, a slot freed): all claim again.
        var waiters: [Int] = []

        var isEmpty: Bool { connections.isEmpty && !opening && !speaksHTTP1 && waiters.isEmpty }

        mutating func takeWaiters() -> [Int] {
            defer { waiters = [] }
            return waiters
        }
    }

    private struct PerOrigin {
        var idle: [Idle] = []
        var opening = 0
        var leased = 0
        var waiters: [Int] = []
        var http2 = Multiplexing()

        var isEmpty: Bool { idle.isEmpty && opening == 0 && leased == 0 && waiters.isEmpty && http2.isEmpty }

        mutating func removeExpired(now: ContinuousClock.Instant, idleTimeout: Duration) -> [Connection] {
            guard idle.contains(where: { now - $0.since >= idleTimeout }) else { return [] }
            let expired = idle.filter { now - $0.since >= idleTimeout }.map(\.connection)
            idle.removeAll { now - $0.since >= idleTimeout }
            return expired
        }
    }

    enum AcquireAction {
        case reuse(Connection)
        case connect
        case wait
    }

    enum HandOff {
        /// Give this connection to the waiter.
        case reuse(waiter: Int, Connection)
        /// Let the waiter open a connection of its own.
        case connect(waiter: Int)
    }

    private var origins: [Origin: PerOrigin] = [:]
    let limit: Int
    let idleTimeout: Duration

    init(limit: Int, idleTimeout: Duration) {
        self.limit = max(1, limit)
        self.idleTimeout = idleTimeout
    }

    /// A request for `origin`; `preferring` is the idle connection to take if it is there (the
    /// one a multi-leg authentication exchange runs on). Returns idle connections to close as
    /// well: expired ones, and those `isOpen` says the peer has closed (they are skipped, not
    /// handed out).
    mutating func acquire(
        _ origin: Origin,
        waiter: Int,
        now: ContinuousClock.Instant,
        preferring: Connection? = nil,
        isOpen: (Connection) -> Bool = { _ in true }
    ) -> (action: AcquireAction, expired: [Connection]) {
        let (limit, idleTimeout) = (limit, idleTimeout)  // not read through `self` while it changes
        return withState(origin) { state in
            var expired = state.removeExpired(now: now, idleTimeout: idleTimeout)
            if let preferring, let index = state.idle.firstIndex(where: { $0.connection === preferring }),
                isOpen(preferring)
            {
                state.idle.remove(at: index)
                state.leased += 1
                return (.reuse(preferring), expired)
            }
            // Most recently used first: the likeliest to still be open.
            while let idle = state.idle.popLast() {
                guard isOpen(idle.connection) else {
                    expired.append(idle.connection)
                    continue
                }
                state.leased += 1
                return (.reuse(idle.connection), expired)
            }
            if state.leased + state.opening < limit {
                state.opening += 1
                return (.connect, expired)
            }
            state.waiters.append(waiter)
            return (.wait, expired)
        }
    }

    /// A connection opened for `origin` is now in use.
    mutating func opened(_ origin: Origin) {
        origins[origin, default: PerOrigin()].opening -= 1
        origins[origin, default: PerOrigin()].leased += 1
    }

    /// Opening failed: the slot goes to the next waiter, if any.
    mutating func openFailed(_ origin: Origin) -> HandOff? {
        withState(origin) { state in
            state.opening -= 1
            guard !state.waiters.isEmpty else { return nil }
            state.opening += 1
            return .connect(waiter: state.waiters.removeFirst())
        }
    }

    /// A leased connection is done. A reusable one goes to the next waiter or the idle list; a
    /// closed one frees its slot for the next waiter.
    mutating func release(
        _ origin: Origin,
        _ connection: Connection,
        reusable: Bool,
        now: ContinuousClock.Instant
    ) -> HandOff? {
        withState(origin) { state in
            if !state.waiters.isEmpty {
                let waiter = state.waiters.removeFirst()
                if reusable { return .reuse(waiter: waiter, connection) }
                state.leased -= 1
                state.opening += 1
                return .connect(waiter: waiter)
            }
            state.leased -= 1
            if reusable { state.idle.append(Idle(connection: connection, since: now)) }
            return nil
        }
    }

    /// A waiter gave up (cancelled, or its deadline passed), in either sub-state; true when it
    /// was still waiting.
    mutating func cancelWaiter(_ origin: Origin, _ waiter: Int) -> Bool {
        guard let entry = origins[origin], entry.waiters.contains(waiter) || entry.http2.waiters.contains(waiter)
        else { return false }
        var state = take(origin)
        state.waiters.removeAll { $0 == waiter }
        state.http2.waiters.removeAll { $0 == waiter }
        store(origin, state)
        return true
    }

    // MARK: HTTP/2

    enum StreamClaim {
        /// A stream slot on this connection was reserved for the caller.
        case stream(Multiplexed)
        /// The caller opens the origin's next connection, then reports
        /// ``streamConnectionOpened(_:_:)``, ``learnedHTTP1(_:)`` or ``streamConnectionFailed(_:)``.
        case open
        /// The origin speaks HTTP/1.1 only: acquire an HTTP/1.1 connection.
        case http1
        /// Wait for a change (the waiter is told with the others), then claim again.
        case wait
    }

    /// A stream for a request to `origin`, the task of opening its next connection, or the word
    /// that it speaks HTTP/1.1. `avoiding`: a connection not to use (it refused the request
    /// just now); `reserve` takes a slot on a connection, false when it has none free.
    mutating func claimStream(
        _ origin: Origin,
        waiter: Int,
        avoiding: AnyObject? = nil,
        isUsable: (Multiplexed) -> Bool,
        reserve: (Multiplexed) -> Bool
    ) -> StreamClaim {
        let limit = limit
        return withState(origin) { state in
            if state.http2.speaksHTTP1 { return .http1 }
            state.http2.connections.removeAll { !isUsable($0) }
            let usable = state.http2.connections.first { $0 !== avoiding && reserve($0) }
            if let usable { return .stream(usable) }
            if !state.http2.opening, state.http2.connections.count < limit {
                state.http2.opening = true
                return .open
            }
            // At the limit with only the connection to avoid: it is better than none.
            if !state.http2.opening, let avoided = state.http2.connections.first(where: { $0 === avoiding }),
                reserve(avoided)
            {
                return .stream(avoided)
            }
            state.http2.waiters.append(waiter)
            return .wait
        }
    }

    /// The connection the claimant opened speaks HTTP/2: it joins the origin's connections (the
    /// claimant reserved its stream). Returns the waiters to wake.
    mutating func streamConnectionOpened(_ origin: Origin, _ connection: Multiplexed) -> [Int] {
        withState(origin) { state in
            state.http2.opening = false
            state.http2.connections.append(connection)
            return state.http2.takeWaiters()
        }
    }

    /// The origin speaks HTTP/1.1 only (its ALPN answer, or HTTP_1_1_REQUIRED). With `adopting`,
    /// the claimant's new connection is in use as an HTTP/1.1 one. Returns the waiters to wake.
    mutating func learnedHTTP1(_ origin: Origin, adopting: Bool = false) -> [Int] {
        withState(origin) { state in
            state.http2.opening = false
            state.http2.speaksHTTP1 = true
            if adopting { state.leased += 1 }
            return state.http2.takeWaiters()
        }
    }

    /// Opening failed: the next claimant tries. Returns the waiters to wake.
    mutating func streamConnectionFailed(_ origin: Origin) -> [Int] {
        withState(origin) { state in
            state.http2.opening = false
            return state.http2.takeWaiters()
        }
    }

    /// A connection takes no new stream (GOAWAY, failure, idle close): forgotten. Returns the
    /// waiters to wake.
    mutating func retired(_ origin: Origin, _ connection: Multiplexed) -> [Int] {
        withState(origin) { state in
            state.http2.connections.removeAll { $0 === connection }
            return state.http2.takeWaiters()
        }
    }

    /// A stream slot came free on one of `origin`'s connections. Returns the waiters to wake.
    mutating func slotFreed(_ origin: Origin) -> [Int] {
        guard origins[origin]?.http2.waiters.isEmpty == false else { return [] }
        return withState(origin) { $0.http2.takeWaiters() }
    }

    /// Every HTTP/2 connection, over every origin.
    var multiplexedConnections: [Multiplexed] { origins.values.flatMap(\.http2.connections) }

    /// Idle connections past the idle timeout, removed from the pool.
    mutating func evictExpired(now: ContinuousClock.Instant) -> [Connection] {
        var expired: [Connection] = []
        for origin in Array(origins.keys) {
            var state = take(origin)
            expired += state.removeExpired(now: now, idleTimeout: idleTimeout)
            store(origin, state)
        }
        return expired
    }

    /// Everything idle, removed (for shutdown).
    mutating func removeAllIdle() -> [Connection] {
        var all: [Connection] = []
        for origin in Array(origins.keys) {
            var state = take(origin)
            all += state.idle.map(\.connection)
            state.idle = []
            store(origin, state)
        }
        return all
    }

    /// Counts, for tests and diagnostics.
    func counts(_ origin: Origin) -> (idle: Int, leased: Int, opening: Int, waiting: Int) {
        let state = origins[origin, default: PerOrigin()]
        return (state.idle.count, state.leased, state.opening, state.waiters.count)
    }

    /// The connections of every origin together.
    var totals: (idle: Int, leased: Int, opening: Int, waiting: Int) {
        origins.values.reduce((0, 0, 0, 0)) { sum, state in
            (sum.0 + state.idle.count, sum.1 + state.leased, sum.2 + state.opening, sum.3 + state.waiters.count)
        }
    }

    /// The most idle connections any one origin holds.
    var largestIdleCount: Int { origins.values.map(\.idle.count).max() ?? 0 }

    var hasIdleConnections: Bool { origins.values.contains { !$0.idle.isEmpty } }

    /// Every idle connection (for tests and diagnostics).
    var idleConnections: [Connection] { origins.values.flatMap { $0.idle.map(\.connection) } }

    /// Runs `body` on the state of `origin` in place (one lookup; the table's storage is not
    /// copied), then drops the state when nothing is left in it.
    private mutating func withState<Result>(_ origin: Origin, _ body: (inout PerOrigin) -> Result) -> Result {
        func run(_ state: inout PerOrigin) -> (Result, Bool) {
            let result = body(&state)
            return (result, state.isEmpty)
        }
        let (result, isEmpty) = run(&origins[origin, default: PerOrigin()])
        if isEmpty { origins[origin] = nil }
        return result
    }

    /// The state of `origin`, taken out of the table: changing it then copies no array (a copy
    /// left in the table would make every change to `idle` or `waiters` copy it first).
    private mutating func take(_ origin: Origin) -> PerOrigin {
        origins.removeValue(forKey: origin) ?? PerOrigin()
    }

    private mutating func store(_ origin: Origin, _ state: PerOrigin) {
        if state.isEmpty {
            origins[origin] = nil
        } else {
            origins[origin] = state
        }
    }
}
