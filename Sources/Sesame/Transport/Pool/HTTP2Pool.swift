/// The HTTP/2 connections of one session, per origin, and what the session learned about each
/// origin's protocol.
///
/// A request to an origin that may speak HTTP/2 claims a stream: on a connection with a free slot
/// (within the peer's `SETTINGS_MAX_CONCURRENT_STREAMS`), else by opening a connection, one at a
/// time per origin, while the others wait for it to learn whether the origin speaks HTTP/2. An
/// origin that answered ALPN with `http/1.1` (or asked for HTTP/1.1 with HTTP_1_1_REQUIRED) is
/// sent to the HTTP/1.1 pool from then on. More connections open only when every one is full,
/// up to `limit`.
final class HTTP2Pool: Sendable {
    enum Claim {
        /// A stream slot on this connection is reserved for the caller.
        case stream(HTTP2Connection)
        /// The caller opens the origin's next connection, then reports ``opened(_:_:)``,
        /// ``speaksHTTP1(_:)`` or ``openFailed(_:)``.
        case open
        /// The origin speaks HTTP/1.1 only: use the HTTP/1.1 pool.
        case http1
    }

    private enum Waiter {
        case registered
        case waiting(CheckedContinuation<Void, any Error>)
        case woken
    }

    private struct PerOrigin {
        var connections: [HTTP2Connection] = []
        var opening = false
        var speaksHTTP1 = false
        var waiters: [Int: Waiter] = [:]
    }

    private struct State {
        var origins: [Origin: PerOrigin] = [:]
        var nextID = 0
    }

    private let state = LockedValue(State())
    private let limit: Int
    private let loop: EventLoop

    init(limit: Int, loop: EventLoop) {
        self.limit = max(1, limit)
        self.loop = loop
    }

    /// A stream slot for a request to `origin`, the task of opening its next connection, or the
    /// word that it speaks HTTP/1.1; waiting (up to `deadline`) while another task opens one.
    /// `avoiding`: a connection not to use (it refused the request just now).
    func claim(
        _ origin: Origin,
        deadline: ContinuousClock.Instant? = nil,
        avoiding: HTTP2Connection? = nil
    ) async throws -> Claim {
        while true {
            let (claim, id) = state.withLock { state -> (Claim?, Int) in
                var entry = state.origins[origin, default: PerOrigin()]
                defer { state.origins[origin] = entry }
                if entry.speaksHTTP1 { return (.http1, 0) }
                entry.connections.removeAll { !$0.isUsable }
                if let connection = entry.connections.first(where: { $0 !== avoiding && $0.reserve() }) {
                    return (.stream(connection), 0)
                }
                if !entry.opening, entry.connections.count < limit {
                    entry.opening = true
                    return (.open, 0)
                }
                // At the limit with only the connection to avoid: it is better than none.
                if !entry.opening, let avoiding, entry.connections.contains(where: { $0 === avoiding }),
                    avoiding.reserve()
                {
                    return (.stream(avoiding), 0)
                }
                state.nextID += 1
                entry.waiters[state.nextID] = .registered
                return (nil, state.nextID)
            }
            if let claim { return claim }
            try await wait(origin, id, deadline: deadline)
        }
    }

    private func wait(_ origin: Origin, _ id: Int, deadline: ContinuousClock.Instant?) async throws {
        let timer = deadline.map { deadline in
            LoopTimer(on: loop, at: deadline) { [self] in
                end(origin, id, SesameError(.timeout, "no HTTP/2 stream to \(origin) was free in time"))
            }
        }
        defer { timer?.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let woken = state.withLock { state -> Bool in
                    guard case .registered? = state.origins[origin]?.waiters[id] else {
                        state.origins[origin]?.waiters[id] = nil
                        return true
                    }
                    state.origins[origin]?.waiters[id] = .waiting(continuation)
                    return false
                }
                if woken { continuation.resume() }
            }
        } onCancel: {
            end(origin, id, SesameError(.cancelled, "waiting for an HTTP/2 stream to \(origin) was cancelled"))
        }
    }

    /// Ends one wait with `error` (its deadline passed, or its task was cancelled).
    private func end(_ origin: Origin, _ id: Int, _ error: SesameError) {
        let continuation = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            guard let waiter = state.origins[origin]?.waiters.removeValue(forKey: id) else { return nil }
            if case .waiting(let continuation) = waiter { return continuation }
            return nil
        }
        continuation?.resume(throwing: error)
    }

    /// Wakes everyone waiting for `origin`: they claim again.
    private func wakeAll(_ origin: Origin, _ change: (inout PerOrigin) -> Void = { _ in }) {
        let continuations = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            guard var entry = state.origins[origin] else { return [] }
            change(&entry)
            var ready: [CheckedContinuation<Void, any Error>] = []
            for (id, waiter) in entry.waiters {
                switch waiter {
                case .waiting(let continuation):
                    ready.append(continuation)
                    entry.waiters[id] = nil
                case .registered:
                    entry.waiters[id] = .woken
                case .woken:
                    break
                }
            }
            state.origins[origin] = entry
            return ready
        }
        for continuation in continuations { continuation.resume() }
    }

    /// The connection the caller opened speaks HTTP/2: it joins the pool, and a stream on it is
    /// reserved for the caller.
    func opened(_ origin: Origin, _ connection: HTTP2Connection) {
        _ = connection.reserve()
        wakeAll(origin) { entry in
            entry.opening = false
            entry.connections.append(connection)
        }
    }

    /// The origin speaks HTTP/1.1 only (its ALPN answer, or HTTP_1_1_REQUIRED).
    func speaksHTTP1(_ origin: Origin) {
        state.withLock { state in
            if state.origins[origin] == nil { state.origins[origin] = PerOrigin() }
        }
        wakeAll(origin) { entry in
            entry.opening = false
            entry.speaksHTTP1 = true
        }
    }

    /// Opening failed: the next claimant tries.
    func openFailed(_ origin: Origin) {
        wakeAll(origin) { $0.opening = false }
    }

    /// A connection takes no new stream (GOAWAY, failure, idle close): forgotten.
    func retired(_ connection: HTTP2Connection) {
        wakeAll(connection.origin) { entry in entry.connections.removeAll { $0 === connection } }
    }

    /// A stream slot came free on `connection`.
    func slotFreed(on connection: HTTP2Connection) {
        let waiting = state.withLock { !($0.origins[connection.origin]?.waiters.isEmpty ?? true) }
        if waiting { wakeAll(connection.origin) }
    }

    /// Closes the connections that carry no stream (the others close when their streams end).
    func closeIdleConnections() {
        let all = state.withLock { state in state.origins.values.flatMap(\.connections) }
        for connection in all where connection.activeStreams == 0 { connection.retire() }
    }

    /// How many HTTP/2 connections the pool holds (for tests).
    var connectionCount: Int { state.withLock { $0.origins.values.reduce(0) { $0 + $1.connections.count } } }
}
