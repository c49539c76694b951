/// Which connection a request gets, as a value-type state machine: reuse an idle keep-alive
/// connection, open a new one within the per-origin limit, or wait in line. No I/O here.
struct PoolStateMachine<Connection: AnyObject> {
    struct Idle {
        let connection: Connection
        let since: ContinuousClock.Instant
    }

    private struct PerOrigin {
        var idle: [Idle] = []
        var opening = 0
        var leased = 0
        var waiters: [Int] = []

        var isEmpty: Bool { idle.isEmpty && opening == 0 && leased == 0 && waiters.isEmpty }

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

    /// A connection opened for `origin` outside the pool (to learn its protocol) is now in use
    /// and counted like one the pool opened.
    mutating func adopted(_ origin: Origin) {
        origins[origin, default: PerOrigin()].leased += 1
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

    /// A waiter gave up (cancelled); true when it was still waiting.
    mutating func cancelWaiter(_ origin: Origin, _ waiter: Int) -> Bool {
        guard let index = origins[origin]?.waiters.firstIndex(of: waiter) else { return false }
        var state = take(origin)
        state.waiters.remove(at: index)
        store(origin, state)
        return true
    }

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
