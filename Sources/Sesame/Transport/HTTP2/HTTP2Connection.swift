/// One ``Connection`` carrying many HTTP/2 streams: the connection's ``HTTP2Session`` under a
/// lock, a read pump that feeds it what arrives and hands each stream its frames, and one writer
/// at a time that sends what the session has to send, in order.
///
/// Streams are reserved first (``reserve()``, within the peer's `SETTINGS_MAX_CONCURRENT_STREAMS`),
/// then opened (``openStream(method:scheme:authority:path:fields:hasBody:)``), read through
/// ``next(on:timeout:)`` and finished (``finish(_:)``). A stream's failure (its RST_STREAM) is
/// that stream's alone; the connection's failure fails every open stream. Past GOAWAY, or once it
/// failed or stayed idle for the idle timeout, the connection is retired: its pool forgets it
/// (``onRetire``) and it closes when its last stream finishes.
///
/// Continuations are resumed after the lock is let go; the lock is never held across a suspension.
final class HTTP2Connection: Sendable {
    let connection: Connection
    let origin: Origin
    private let state: LockedValue<State>
    let idleTimeout: Duration
    /// Told once, when the connection takes no new stream any more.
    private let onRetire: @Sendable (HTTP2Connection) -> Void
    /// Told when a stream slot came free.
    private let onSlotFreed: @Sendable (HTTP2Connection) -> Void

    /// How much of a request body may wait in the session for the peer's window before its sender waits.
    static let bodyBufferLimit = 65_536

    struct State {
        let session: HTTP2Session
        var streams: [Int32: HTTP2StreamState] = [:]
        /// Streams reserved or open, not finished.
        var reserved = 0
        /// The peer's limit on open streams (RFC 9113 leaves it unlimited until its SETTINGS say;
        /// a sane bound is kept until then).
        var maxConcurrentStreams = 100
        /// GOAWAY's last stream: streams above it were not processed.
        var lastProcessed: Int32?
        var failure: SesameError?
        var retired = false
        var flushing = false
        /// A reader (the pump, or the only stream's task) holds the reading role
        /// (`HTTP2Connection+Reading.swift`).
        var reading = false
        /// Bytes came unasked while a reader held the role and no read of its waited: the
        /// connection told once and stopped watching the socket, so the reader that lets the role
        /// go hands it to the pump, which reads them (see `releaseReading`).
        var unreadInput = false
        /// The stream whose own task holds the reading role, with what ends its read: a stream
        /// that fails meanwhile (a reset it caused, sent by the writer) must not wait for bytes
        /// that may never come.
        var directRead: (stream: Int32, withdrawal: ReadWithdrawal)?
        var pingWaiters: [CheckedContinuation<Void, any Error>] = []
        /// The GOAWAY a failed session still has to send.
        var goodbye: [UInt8] = []
        /// A sweep for waits past their deadlines is scheduled.
        var sweeping = false
        /// The idle timer is set (see `scheduleIdleClose`).
        var idleTimerPending = false
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
        state = LockedValue(State(session: try HTTP2Session(limits: limits)))
    }

    func withState<Result>(_ body: (inout State) throws -> Result) rethrows -> Result {
        try state.withLock(body)
    }

    /// Tells the pool, once (the callers check `State.retired` turned true just then).
    func notifyRetired() { onRetire(self) }

    /// Sends the connection preface and reads the peer's SETTINGS; from then on, what arrives
    /// while nobody reads starts the pump (`HTTP2Connection+Reading.swift`).
    func start() {
        connection.unsolicitedInputHandler.withLock { $0 = { [weak self] in self?.unsolicitedInput() } }
        scheduleFlush()
        // The peer's SETTINGS come unasked; the handler may have started the pump for them already.
        unsolicitedInput()
    }

    /// Takes a stream slot when the connection has one free; false when it is full or retired.
    func reserve() -> Bool {
        let isOpen = !connection.isKnownClosed
        return state.withLock { state in
            guard isOpen, !state.retired, state.failure == nil, state.lastProcessed == nil,
                state.reserved < state.maxConcurrentStreams
            else { return false }
            state.reserved += 1
            if let since = state.idleSince {
                state.idleSpan = since.duration(to: .now)
                state.idleSince = nil
            }
            return true
        }
    }

    /// How long the connection had been idle when its first stream since was reserved, once
    /// (for the first taker only); nil when it was busy or another taker asked.
    func takeIdleSpan() -> Duration? {
        state.withLock { state in
            defer { state.idleSpan = nil }
            return state.idleSpan
        }
    }

    /// True when the connection may still be handed streams.
    var isUsable: Bool { !connection.isKnownClosed && state.withLock { !$0.retired } }

    /// Response body bytes received and not yet taken by readers, over every stream (for tests).
    var unconsumedBytes: Int { state.withLock { $0.streams.values.reduce(0) { $0 + $1.unconsumedBytes } } }

    /// How many streams are reserved or open (for tests and the pool).
    var activeStreams: Int { state.withLock { $0.reserved } }

    /// Opens a reserved stream for a request; its HEADERS go out with the next write
    /// (``requestOpened()``, or the body's first ``sendBody(_:on:end:timeout:)``).
    /// - Throws: ``HTTP2Exchange/Unprocessed`` when the connection takes no new stream (the
    ///   request can go elsewhere); ``SesameError`` for a request HTTP/2 cannot carry. Either way
    ///   the caller gives the reservation back (``cancelReservation()``).
    func openStream(
        method: String,
        scheme: String,
        authority: String,
        path: String,
        fields: HTTPHeaders,
        hasBody: Bool
    ) throws -> Int32 {
        let id = try state.withLock { state -> Int32 in
            do {
                if let failure = state.failure { throw HTTP2Exchange.Unprocessed(failure, certain: true) }
                let id = try state.session.submitRequest(
                    method: method,
                    scheme: scheme,
                    authority: authority,
                    path: path,
                    fields: fields,
                    hasBody: hasBody
                )
                state.streams[id] = HTTP2StreamState()
                return id
            } catch let error as SesameError where error.code == .connectionClosed {
                throw HTTP2Exchange.Unprocessed(error, certain: true)
            }
        }
        return id
    }

    /// Has the stream's HEADERS written. While it is the connection's only stream, by the
    /// request's own task, with its first read (`HTTP2Connection+Reading.swift`): no other
    /// request's frames could go with them, and a writer task would cost a thread wake-up per
    /// request. Otherwise by a writer task, so that requests opened meanwhile by other tasks go
    /// out with them in one write (writing each on its own task cost 1.8 times the CPU per
    /// request at 64 concurrent streams).
    func requestOpened() {
        if withState({ $0.reserved > 1 }) { scheduleFlush() }
    }

    /// The reader took `count` body bytes: the peer may send that much more.
    func consumed(_ count: Int, on id: Int32) {
        let write = state.withLock { state -> Bool in
            state.session.consumed(count, on: id)
            return state.session.wantsWrite
        }
        if write { scheduleFlush() }
    }

    /// Gives a stream's slot back; a stream whose response is not complete is reset, and what it
    /// had queued is counted as consumed.
    func finish(_ id: Int32) {
        let idle = state.withLock { state -> Idle? in
            if let stream = state.streams.removeValue(forKey: id) {
                // A response that is not complete, or a request body still going: the peer learns to stop.
                if !stream.ended || state.session.outgoing[id] != nil { state.session.cancel(id) }
                if stream.unconsumedBytes > 0 { state.session.consumed(stream.unconsumedBytes, on: id) }
            }
            return slotFreed(&state)
        }
        scheduleFlush()
        slotFreed(idle)
    }

    /// Gives back a reservation no stream was opened for.
    func cancelReservation() {
        slotFreed(state.withLock { slotFreed(&$0) })
    }

    /// What a connection whose last stream slot came back does next.
    private enum Idle {
        case close
        case waitForStreams
    }

    /// Under the lock: one slot fewer; when none is left, the connection is idle from now.
    private func slotFreed(_ state: inout State) -> Idle? {
        state.reserved -= 1
        guard state.reserved == 0 else { return nil }
        state.idleSince = .now
        return state.retired ? .close : .waitForStreams
    }

    /// Outside the lock: closes a retired connection, or watches an idle one for its idle timeout.
    private func slotFreed(_ idle: Idle?) {
        switch idle {
        case .close: close()
        case .waitForStreams: scheduleIdleClose()
        case nil: break
        }
        onSlotFreed(self)
    }
}
