/// What an ``HTTP2Connection`` knows about its streams and its own end, with no I/O and no
/// nghttp2: the session's events come in, and out come the waits they end and the calls the
/// connection makes next (the ``Actions``). A value its connection keeps and changes on its loop.
struct HTTP2ConnectionStateMachine {
    typealias Waiters = [CheckedContinuation<Void, any Error>]

    /// What the connection does after a change, in this order.
    struct Actions {
        /// Waits that end: a stream's reader or body sender, a PING's sender.
        var wake: Waiters = []
        /// Body bytes of streams nobody reads any more: they still count against the
        /// connection's window, so the session is told they were consumed.
        var consume: [(stream: Int32, count: Int)] = []
        /// Streams whose reset the session sends (a wait that timed out, a reader that left).
        var cancel: [Int32] = []
        /// The connection takes no new stream from now on: its pool forgets it.
        var retiredNow = false
        /// The peer's SETTINGS changed how many streams it takes at once.
        var limitChanged = false
    }

    let origin: Origin
    private(set) var streams: [Int32: HTTP2StreamState] = [:]
    /// The peer's limit on open streams (RFC 9113 leaves it unlimited until its SETTINGS say;
    /// a sane bound is kept until then).
    private(set) var maxConcurrentStreams = 100
    /// GOAWAY's last stream: streams above it were not processed.
    private(set) var lastProcessed: Int32?
    private(set) var failure: SesameError?
    /// No new stream: past GOAWAY (either side's), failure, or idleness.
    private(set) var retired = false
    private var pingWaiters: Waiters = []
    /// PINGs sent and acknowledged, so that a PING's timer knows whether its answer came.
    private(set) var pingsSent = 0
    private(set) var pingsAcknowledged = 0

    /// The most open streams one connection is allowed, whatever the peer offers.
    static let streamLimit = 1000

    init(origin: Origin) {
        self.origin = origin
    }

    /// Body bytes received and not yet taken, over every stream.
    var unconsumedBytes: Int { streams.values.reduce(0) { $0 + $1.unconsumedBytes } }

    // MARK: Streams

    /// A stream the session opened for a request.
    mutating func opened(_ id: Int32) {
        streams[id] = HTTP2StreamState()
    }

    /// Takes the stream's next item (nil: none yet), or throws its failure.
    mutating func take(from id: Int32) throws -> HTTP2StreamState.Item? {
        guard streams[id] != nil else { throw Self.finished(id) }
        return try streams[id]?.take()
    }

    /// The stream's next item, left in place.
    func peek(at id: Int32) throws -> HTTP2StreamState.Item? {
        guard let stream = streams[id] else { throw Self.finished(id) }
        return try stream.peek()
    }

    /// What reading a stream that was finished says.
    private static func finished(_ id: Int32) -> SesameError {
        SesameError(.invalidArgument, "HTTP/2 stream \(id) was already finished")
    }

    /// Whether stream `id` is gone or done (no more body to send on it).
    func isFinished(_ id: Int32) -> Bool {
        streams[id]?.isFinished ?? true
    }

    /// Registers the reader's wait for the stream's next item, until `deadline` (a nil `message`:
    /// the deadline ends only the wait). False when there is something to take already (or the
    /// stream is gone): the caller goes on at once.
    mutating func waitForItem(
        on id: Int32,
        _ continuation: CheckedContinuation<Void, any Error>,
        until deadline: ContinuousClock.Instant,
        message: String?
    ) -> Bool {
        guard var stream = streams[id], !stream.hasItem else { return false }
        stream.waiter = continuation
        stream.deadline = (deadline, message)
        streams[id] = stream
        return true
    }

    /// Registers the body sender's wait for room, until `deadline`. False when the stream is done.
    mutating func waitForRoom(
        on id: Int32,
        _ continuation: CheckedContinuation<Void, any Error>,
        until deadline: ContinuousClock.Instant,
        message: String
    ) -> Bool {
        guard var stream = streams[id], !stream.isFinished else { return false }
        stream.bodyWaiter = continuation
        stream.deadline = (deadline, message)
        streams[id] = stream
        return true
    }

    /// Ends the waits for room of the streams `hasRoom` says have room now (their bytes went
    /// to the session's output), and of streams that are done.
    mutating func releaseBodyWaiters(hasRoom: (Int32) -> Bool, into actions: inout Actions) {
        for (id, stream) in streams where stream.bodyWaiter != nil {
            guard stream.isFinished || hasRoom(id) else { continue }
            if let waiter = streams[id]?.bodyWaiter {
                actions.wake.append(waiter)
                streams[id]?.bodyWaiter = nil
            }
        }
    }

    /// The reader is done with stream `id`: a response not complete, or a request body still
    /// going, is reset (`stillSending`: the session has body bytes for it); what it had not
    /// taken counts as consumed.
    mutating func finish(_ id: Int32, stillSending: Bool, into actions: inout Actions) {
        guard let stream = streams.removeValue(forKey: id) else { return }
        if !stream.ended || stillSending { actions.cancel.append(id) }
        if stream.unconsumedBytes > 0 { actions.consume.append((id, stream.unconsumedBytes)) }
    }

    /// Ends stream `id` with `error` (which its reader gets) and resets it, unless it ended.
    mutating func interrupt(_ id: Int32, _ error: SesameError, into actions: inout Actions) {
        guard var stream = streams[id], !stream.isFinished else { return }
        stream.fail(error)
        stream.takeWaiters(&actions.wake)
        streams[id] = stream
        actions.cancel.append(id)
    }

    /// The waits whose deadlines passed by `now` end: with a timeout that fails the stream, or,
    /// for a wait that only looks, on their own. Returns whether any wait is left.
    mutating func expire(now: ContinuousClock.Instant, into actions: inout Actions) -> Bool {
        var waiting = false
        for (id, stream) in streams {
            guard let deadline = stream.deadline, stream.waiter != nil || stream.bodyWaiter != nil else { continue }
            if deadline.at > now {
                waiting = true
            } else if let message = deadline.message {
                interrupt(id, SesameError(.timeout, message), into: &actions)
            } else if let waiter = stream.waiter {
                actions.wake.append(waiter)
                streams[id]?.waiter = nil
                streams[id]?.deadline = nil
            }
        }
        return waiting
    }

    // MARK: The connection

    /// A PING went out; `continuation` resumes with its acknowledgement. Returns the PING's
    /// number, for ``pingAnswered(_:)``.
    mutating func pingSent(_ continuation: CheckedContinuation<Void, any Error>) -> Int {
        pingWaiters.append(continuation)
        pingsSent += 1
        return pingsSent
    }

    /// Whether PING number `number` was acknowledged.
    func pingAnswered(_ number: Int) -> Bool { pingsAcknowledged >= number }

    /// This side retires the connection (its pool closes it as idle): no new stream.
    mutating func retire(into actions: inout Actions) {
        guard !retired else { return }
        retired = true
        actions.retiredNow = true
    }

    /// The connection failed: every open stream fails with it. A stream that received nothing
    /// when the peer closed or reset the connection may be sent again (idempotent requests
    /// only: the server may have processed it).
    mutating func fail(_ error: any Error, into actions: inout Actions) {
        let failure = error as? SesameError ?? SesameError(.protocolError, "\(origin): \(error)")
        if self.failure == nil { self.failure = failure }
        let lost = [SesameError.Code.connectionClosed, .connectionReset, .ioError].contains(failure.code)
        for id in streams.keys {
            update(id, &actions) { stream in
                stream.fail(
                    lost && !stream.receivedAny ? HTTP2Exchange.Unprocessed(failure, certain: false) : failure
                )
            }
        }
        // A PING's sender learns from `pingAnswered` that its answer never came.
        actions.wake += pingWaiters
        pingWaiters.removeAll()
        retire(into: &actions)
    }

    /// Hands the session's events to their streams.
    mutating func dispatch(_ events: [HTTP2Session.Event], into actions: inout Actions) {
        for event in events {
            switch event {
            case .settings(let maxConcurrentStreams):
                self.maxConcurrentStreams = max(1, min(maxConcurrentStreams, Self.streamLimit))
                actions.limitChanged = true
            case .head(let id, let status, let fields):
                update(id, &actions) { $0.append(.head(status: status, fields: fields)) }
            case .data(let id, let bytes):
                if streams[id] == nil {
                    actions.consume.append((id, bytes.count))
                } else {
                    update(id, &actions) { $0.append(.data(bytes)) }
                }
            case .trailers(let id, let fields):
                // nghttp2 checked them (no pseudo-header; END_STREAM set).
                update(id, &actions) { $0.append(.trailers(fields)) }
            case .end(let id):
                update(id, &actions) { $0.append(.end) }
            case .reset(let id, let code, let reason):
                let error = Self.resetError(code, reason: reason, stream: id, origin: origin)
                update(id, &actions) { $0.fail(error) }
            case .refused(let id, let reason):
                let error = SesameError(
                    .protocolError,
                    "HTTP/2: \(origin) broke the protocol on stream \(id), which was reset: \(reason)"
                )
                update(id, &actions) { $0.fail(error) }
            case .goAway(let last, let code, let debug):
                wentAway(last: last, code: code, debug: debug, &actions)
            case .pingAcknowledged:
                pingsAcknowledged = pingsSent
                actions.wake += pingWaiters
                pingWaiters.removeAll()
            }
        }
    }

    /// The peer's GOAWAY: streams above `last` were not processed and may go elsewhere.
    private mutating func wentAway(last: Int32, code: UInt32, debug: String, _ actions: inout Actions) {
        lastProcessed = last
        let name = HTTP2Session.errorName(code)
        let said = debug.isEmpty ? name : "\(name): \(debug)"
        let error = SesameError(.connectionClosed, "\(origin) went away (GOAWAY \(said)) before this request")
        for id in streams.keys where id > last {
            update(id, &actions) {
                $0.fail(HTTP2Exchange.Unprocessed(error, certain: true, requiresHTTP1: code == 0xd))
            }
        }
        retire(into: &actions)
    }

    private mutating func update(_ id: Int32, _ actions: inout Actions, _ change: (inout HTTP2StreamState) -> Void) {
        // In place: a copy taken out of the dictionary shares its items with the one left behind,
        // and the first append would copy them all.
        streams[id]?.change(change, waking: &actions.wake)
    }

    /// The error a stream's RST_STREAM stands for: REFUSED_STREAM and HTTP_1_1_REQUIRED leave
    /// the request unprocessed (RFC 9113 section 8.7), so it may be sent again.
    static func resetError(_ code: UInt32, reason: String?, stream: Int32, origin: Origin) -> any Error {
        let name = HTTP2Session.errorName(code)
        let error = SesameError(
            .streamReset,
            "\(origin) reset stream \(stream) (\(name))\(reason.map { ": \($0)" } ?? "")"
        )
        switch code {
        case 0x7: return HTTP2Exchange.Unprocessed(error, certain: true)
        case 0xd: return HTTP2Exchange.Unprocessed(error, certain: true, requiresHTTP1: true)
        default: return error
        }
    }
}
