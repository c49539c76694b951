// What a request's task does with its stream: open it, send its body, take its response's items,
// finish it. Each wait ends with what it waited for, the stream's failure, its deadline, or its
// task's cancellation (which resets the stream). All of it runs on the loop; the reader's task
// (preferring the loop as its executor) calls in without a hop.
extension HTTP2Connection {
    /// Opens a reserved stream for a request; its HEADERS go out at the end of the loop's turn,
    /// with every other request's of the turn.
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
    ) async throws -> Int32 {
        try await loop.onLoop { [self] in
            do {
                if let failure = machine.failure { throw HTTP2Exchange.Unprocessed(failure, certain: true) }
                let id = try session.submitRequest(
                    method: method,
                    scheme: scheme,
                    authority: authority,
                    path: path,
                    fields: fields,
                    hasBody: hasBody
                )
                machine.opened(id)
                scheduleFlush()
                return id
            } catch let error as SesameError where error.code == .connectionClosed {
                throw HTTP2Exchange.Unprocessed(error, certain: true)
            }
        }
    }

    /// Has what is queued written at the end of the loop's current turn (after a hop there).
    func flush() async {
        _ = try? await loop.onLoop { [self] in scheduleFlush() }
    }

    /// The reader took `count` body bytes: the peer may send that much more.
    func consumed(_ count: Int, on id: Int32) {
        onLoop { [self] in
            session.consumed(count, on: id)
            scheduleFlush()
        }
    }

    /// Gives a stream's slot back; a stream whose response is not complete is reset, and what it
    /// had queued is counted as consumed.
    func finish(_ id: Int32) {
        onLoop { [self] in
            var actions = HTTP2ConnectionStateMachine.Actions()
            machine.finish(id, stillSending: session.outgoing[id] != nil, into: &actions)
            perform(actions)
            slotFreed()
        }
    }

    /// Body bytes received and not yet taken by readers, over every stream (for tests).
    var unconsumedBytes: Int {
        get async { (try? await loop.onLoop { [self] in machine.unconsumedBytes }) ?? 0 }
    }

    // MARK: Request bodies

    /// Queues request-body bytes, then waits (up to `timeout`) while more than
    /// ``bodyBufferLimit`` of them wait for the peer's window. Returns false when the stream no
    /// longer takes a body (its response is complete, or it failed: the reader learns which).
    func sendBody(_ bytes: [UInt8], on id: Int32, end: Bool, timeout: Duration) async throws -> Bool {
        let deadline = loop.now + timeout
        try await waiting(on: id) { [self] continuation in
            guard !machine.isFinished(id) else { return false }
            session.sendBody(bytes, on: id, end: end)
            scheduleFlush()
            guard session.bufferedBody(on: id) > Self.bodyBufferLimit else { return false }
            // The peer's WINDOW_UPDATE makes room.
            let message = "\(origin) took no request body on stream \(id) for \(timeout)"
            return machine.waitForRoom(on: id, continuation, until: deadline, message: message)
        }
        return try await loop.onLoop { [self] in !machine.isFinished(id) }
    }

    // MARK: Responses

    /// The next item of a stream's response, waiting up to `timeout` for it.
    /// - Throws: the stream's failure; ``SesameError/Code/timeout`` when nothing came in time, or
    ///   ``SesameError/Code/cancelled`` when the task was cancelled (the stream is then reset).
    func next(on id: Int32, timeout: Duration) async throws -> HTTP2StreamState.Item {
        let deadline = loop.now + timeout
        let message = Self.silence(origin, stream: id, for: timeout)
        while true {
            if let item = try await loop.onLoop({ [self] in try machine.take(from: id) }) { return item }
            try await waitForItem(on: id, until: deadline, message: message)
        }
    }

    /// The stream's next item, left for ``next(on:timeout:)``, once one arrived by `deadline`;
    /// nil when none did (the stream goes on).
    func peek(on id: Int32, until deadline: ContinuousClock.Instant) async throws -> HTTP2StreamState.Item? {
        while true {
            if let item = try await loop.onLoop({ [self] in try machine.peek(at: id) }) { return item }
            guard loop.now < deadline else { return nil }
            try await waitForItem(on: id, until: deadline, message: nil)
        }
    }

    private func waitForItem(on id: Int32, until deadline: ContinuousClock.Instant, message: String?) async throws {
        try await waiting(on: id) { [self] continuation in
            machine.waitForItem(on: id, continuation, until: deadline, message: message)
        }
    }

    /// Suspends while `register` (run on the loop) says the wait it registered goes on; the
    /// task's cancellation ends it, resetting the stream.
    private func waiting(
        on id: Int32,
        _ register: @escaping (CheckedContinuation<Void, any Error>) -> Bool
    ) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                onLoop(resuming: continuation) { [self] in
                    guard register(continuation) else { return continuation.resume() }
                    startSweep()
                }
            }
        } onCancel: {
            interrupt(id, SesameError(.cancelled, "the request on stream \(id) to \(origin) was cancelled"))
        }
    }

    /// Ends a stream's wait with `error`, which the stream keeps; the stream is reset.
    func interrupt(_ id: Int32, _ error: SesameError) {
        onLoop { [self] in
            var actions = HTTP2ConnectionStateMachine.Actions()
            machine.interrupt(id, error, into: &actions)
            perform(actions)
        }
    }

    // MARK: Deadlines

    // Waits end at their deadlines through one sweep of the connection's streams every
    // `sweepInterval` while any stream waits, not through a timer per wait (a timer set and
    // cancelled for every read of every stream). A timeout comes up to an interval late.
    static let sweepInterval = Duration.milliseconds(100)

    private func startSweep() {
        guard sweepTimer == nil else { return }
        sweepTimer = loop.scheduleTimer(after: Self.sweepInterval) { [weak self] in self?.sweep() }
    }

    private func sweep() {
        sweepTimer = nil
        var actions = HTTP2ConnectionStateMachine.Actions()
        let waiting = machine.expire(now: loop.now, into: &actions)
        perform(actions)
        if waiting { startSweep() }
    }

    /// What a stream's timeout says.
    static func silence(_ origin: Origin, stream id: Int32, for timeout: Duration) -> String {
        "\(origin) sent nothing on stream \(id) for \(timeout)"
    }
}
