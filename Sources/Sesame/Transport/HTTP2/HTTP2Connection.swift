import FoundationEssentials

/// One ``Connection`` carrying many HTTP/2 streams, as the protocol the connection pushes its
/// input to (a `ConnectionHandler`).
///
/// It belongs to the connection's loop: the ``HTTP2Session``, the streams' state (an
/// ``HTTP2ConnectionStateMachine``) and the timers are touched on the loop's thread only, without
/// a lock. What arrives is handed to the session and its events to the streams as it comes;
/// what the session has to send goes out at the end of the loop's turn, so the frames of every
/// request of one turn leave in one write. A request's task, which prefers the loop as its
/// executor, calls in without a hop; another thread's call hops to the loop.
///
/// Streams are reserved first (``reserve()``, within the peer's `SETTINGS_MAX_CONCURRENT_STREAMS`;
/// the pool does it under its own lock, so the slot count is the one thing kept under a lock),
/// then opened, read and finished (`HTTP2Connection+Streams.swift`). A stream's failure (its
/// RST_STREAM) is that stream's alone; the connection's failure fails every open stream. Past
/// GOAWAY, or once it failed or stayed idle for the idle timeout, the connection is retired: its
/// pool forgets it (`onRetire`) and it closes when its last stream finishes.
final class HTTP2Connection: ConnectionHandler, @unchecked Sendable {
    // @unchecked: everything but `slots` is touched on the loop only (see the type's comment).
    let connection: Connection
    let origin: Origin
    let idleTimeout: Duration
    /// Told once, when the connection takes no new stream any more.
    private let onRetire: @Sendable (HTTP2Connection) -> Void
    /// Told when a stream slot came free.
    private let onSlotFreed: @Sendable (HTTP2Connection) -> Void
    let session: HTTP2Session
    var machine: HTTP2ConnectionStateMachine
    /// What the pool reads and reserves from any thread.
    let slots = LockedValue(Slots())
    /// A write is registered for the end of the loop's turn.
    private var flushPending = false
    /// The connection was closed (by this side or the peer).
    private var closed = false
    /// The timer that ends waits past their deadlines (`HTTP2Connection+Streams.swift`).
    var sweepTimer: TimerHandle?
    private var idleTimer: TimerHandle?

    /// How much of a request body may wait in the session for the peer's window before its sender waits.
    static let bodyBufferLimit = 65_536

    /// The stream slots, under a lock: the pool reserves them from its tasks.
    struct Slots {
        /// Streams reserved or open, not finished.
        var reserved = 0
        var limit = 100
        var retired = false
        /// Since when no stream was reserved (nil: busy, or never used).
        var idleSince: ContinuousClock.Instant?
        /// How long it was idle before the latest reservation (see `takeIdleSpan()`).
        var idleSpan: Duration?
    }

    init(
        _ connection: Connection,
        origin: Origin,
        limits: HTTP2Session.Limits = HTTP2Session.Limits(),
        idleTimeout: Duration,
        onRetire: @escaping @Sendable (HTTP2Connection) -> Void,
        onSlotFreed: @escaping @Sendable (HTTP2Connection) -> Void
    ) throws {
        self.connection = connection
        self.origin = origin
        self.idleTimeout = idleTimeout
        self.onRetire = onRetire
        self.onSlotFreed = onSlotFreed
        session = try HTTP2Session(limits: limits)
        machine = HTTP2ConnectionStateMachine(origin: origin)
    }

    var loop: EventLoop { connection.loop }

    /// Takes over the connection: the preface and SETTINGS go out, and what the server sent
    /// already (its SETTINGS, held by the connection's byte stream) is read first.
    func start() {
        onLoop { [self] in
            let early = (connection.handler as? RawStream)?.takeBuffered() ?? []
            if !early.isEmpty { received(early) }
            connection.attach(self)
            scheduleFlush()
        }
    }

    // MARK: The pool's view

    /// Takes a stream slot when the connection has one free; false when it is full or retired.
    func reserve() -> Bool {
        let isOpen = !connection.isKnownClosed
        let now = loop.now
        return slots.withLock { slots in
            guard isOpen, !slots.retired, slots.reserved < slots.limit else { return false }
            slots.reserved += 1
            if let since = slots.idleSince {
                slots.idleSpan = since.duration(to: now)
                slots.idleSince = nil
            }
            return true
        }
    }

    /// How long the connection had been idle when its first stream since was reserved, once
    /// (for the first taker only); nil when it was busy or another taker asked.
    func takeIdleSpan() -> Duration? {
        slots.withLock { slots in
            defer { slots.idleSpan = nil }
            return slots.idleSpan
        }
    }

    /// True when the connection may still be handed streams.
    var isUsable: Bool { !connection.isKnownClosed && slots.withLock { !$0.retired } }

    /// How many streams are reserved or open (for tests and the pool).
    var activeStreams: Int { slots.withLock { $0.reserved } }

    /// Gives back a reservation no stream was opened for.
    func cancelReservation() {
        onLoop { [self] in slotFreed() }
    }

    /// One slot fewer; a retired connection whose last slot came back closes, an idle one waits
    /// for its idle timeout.
    func slotFreed() {
        let now = loop.now
        let idle = slots.withLock { slots -> Bool in
            slots.reserved -= 1
            guard slots.reserved == 0 else { return false }
            slots.idleSince = now
            return true
        }
        if idle {
            if machine.retired { close() } else { scheduleIdleClose() }
        }
        onSlotFreed(self)
    }

    // MARK: Input (ConnectionHandler)

    var wantsInput: Bool { machine.failure == nil }

    func received(_ bytes: [UInt8]) {
        var actions = HTTP2ConnectionStateMachine.Actions()
        do {
            machine.dispatch(try session.receive(bytes), into: &actions)
        } catch {
            machine.fail(error, into: &actions)
        }
        perform(actions)
        if machine.failure != nil { return close() }
        scheduleFlush()  // SETTINGS and PING acknowledgements, WINDOW_UPDATEs
    }

    func inputEnded(cleanly: Bool) {
        fail(SesameError(.connectionClosed, "\(origin) closed the HTTP/2 connection"))
    }

    func outputFlushed() {
        scheduleFlush()  // what waited for the socket to take the last write
    }

    func connectionClosed(_ error: SesameError) {
        fail(error)  // its close() finds the socket closed, and cancels the timers
    }

    // MARK: Output

    /// Registers a write for the end of the turn, when the session has something to send.
    func scheduleFlush() {
        guard !flushPending, !closed, machine.failure == nil, session.wantsWrite else { return }
        flushPending = true
        loop.atTurnEnd { [self] in
            flushPending = false
            flush()
        }
    }

    /// Writes what the session has to send, unless the socket has not taken the last write yet
    /// (``outputFlushed()`` comes back then): the session, not the socket, holds what waits.
    private func flush() {
        guard !closed, machine.failure == nil, connection.pendingOutputCount == 0 else { return }
        var output: [UInt8] = []
        var actions = HTTP2ConnectionStateMachine.Actions()
        do {
            machine.dispatch(try session.drainOutput(into: &output), into: &actions)
        } catch {
            machine.fail(error, into: &actions)
        }
        // Body senders waiting for room get it once their bytes went to the session's output.
        machine.releaseBodyWaiters(hasRoom: { session.bufferedBody(on: $0) <= Self.bodyBufferLimit }, into: &actions)
        perform(actions)
        if !output.isEmpty {
            do {
                try connection.send(output)
            } catch {
                return fail(error)
            }
        }
        if machine.failure != nil { close() }
    }

    /// Carries out what the state machine asked for.
    func perform(_ actions: HTTP2ConnectionStateMachine.Actions) {
        for (stream, count) in actions.consume { session.consumed(count, on: stream) }
        for stream in actions.cancel { session.cancel(stream) }
        if actions.limitChanged {
            let limit = machine.maxConcurrentStreams
            slots.withLock { $0.limit = limit }
        }
        if actions.retiredNow {
            let idle = slots.withLock { slots -> Bool in
                slots.retired = true
                return slots.reserved == 0
            }
            onRetire(self)
            if idle { close() }  // nothing is left to finish
        }
        for continuation in actions.wake { continuation.resume() }
        if !actions.cancel.isEmpty || !actions.consume.isEmpty { scheduleFlush() }
    }

    // MARK: Ending

    /// The connection failed: every open stream fails with `error`, and it closes.
    func fail(_ error: SesameError) {
        var actions = HTTP2ConnectionStateMachine.Actions()
        machine.fail(error, into: &actions)
        perform(actions)
        close()
    }

    /// Closes the connection: what the session still has to send (a GOAWAY) goes first.
    func close() {
        guard !closed else { return }
        closed = true
        cancelTimers()
        var output: [UInt8] = []
        _ = try? session.drainOutput(into: &output)
        if !output.isEmpty { try? connection.send(output) }
        connection.closeNow()
    }

    private func cancelTimers() {
        if let sweepTimer { loop.cancelTimer(sweepTimer) }
        if let idleTimer { loop.cancelTimer(idleTimer) }
        sweepTimer = nil
        idleTimer = nil
    }

    /// Sends a PING and waits for its acknowledgement: the connection is alive.
    func ping(timeout: Duration) async throws {
        let sent = ValueBox<Int>()
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            onLoop(resuming: continuation) { [self] in
                if let failure = machine.failure { return continuation.resume(throwing: failure) }
                session.ping()
                let number = machine.pingSent(continuation)
                sent.value = number
                _ = loop.scheduleTimer(after: timeout) { [weak self] in
                    guard let self, !machine.pingAnswered(number) else { return }
                    fail(SesameError(.timeout, "\(origin) did not answer an HTTP/2 PING within \(timeout)"))
                }
                scheduleFlush()
            }
        }
        let number = sent.value ?? 0
        try await loop.onLoop { [self] in
            guard machine.pingAnswered(number) else {
                throw machine.failure ?? SesameError(.connectionClosed, "\(origin): the HTTP/2 connection closed")
            }
        }
    }

    /// Closes the connection once no stream is left: GOAWAY, then the socket. Idle connections
    /// the pool closes come here; streams still open keep the connection until they finish.
    func retire() {
        onLoop { [self] in
            var actions = HTTP2ConnectionStateMachine.Actions()
            if !machine.retired {
                session.goAway()
                machine.retire(into: &actions)
            }
            perform(actions)
            if slots.withLock({ $0.reserved == 0 }) { close() } else { scheduleFlush() }
        }
    }

    /// After `idleTimeout` without a new stream, the connection is retired. One idle timer at a
    /// time (a timer per finished stream would keep one alive for every request of the last idle
    /// timeout): when it fires early, because the connection was busy in between, it is set
    /// again for what is left. The timer holds the connection weakly: a connection its server
    /// retired is freed as soon as its pool and streams let it go.
    private func scheduleIdleClose() {
        guard idleTimer == nil, !closed else { return }
        idleTimer = loop.scheduleTimer(after: idleTimeout) { [weak self] in self?.idleTimerFired() }
    }

    private func idleTimerFired() {
        idleTimer = nil
        guard let since = slots.withLock({ $0.reserved == 0 ? $0.idleSince : nil }) else { return }
        let left = idleTimeout - since.duration(to: loop.now)
        if left <= .zero {
            retire()
        } else {
            idleTimer = loop.scheduleTimer(after: left) { [weak self] in self?.idleTimerFired() }
        }
    }

    // MARK: Reaching the loop

    /// Runs `work` on the loop: at once when called there, else after a hop (dropped when the
    /// loop has shut down, which closed the connection).
    func onLoop(_ work: @escaping () -> Void) {
        if loop.inEventLoop { return work() }
        let bound = LoopBound1<Void>(work)
        _ = loop.execute { bound.body(()) }
    }

    /// Runs `work` on the loop, which resumes `continuation`; when the loop has shut down, the
    /// continuation resumes with that.
    func onLoop<Value>(resuming continuation: CheckedContinuation<Value, any Error>, _ work: @escaping () -> Void) {
        if loop.inEventLoop { return work() }
        let bound = LoopBound1<Void>(work)
        if !loop.execute({ bound.body(()) }) {
            continuation.resume(throwing: SesameError(.eventLoopShutDown, "the event loop has shut down"))
        }
    }
}

/// A value set on the loop before a continuation resumes, read by the resumed task after it
/// (the resumption orders the two).
final class ValueBox<Value>: @unchecked Sendable {
    // @unchecked: see the type's comment.
    var value: Value?
}
