// Waiting on a stream: for its response's next item, or for room for its request body; each
// wait ends with what it waited for, the stream's failure, its deadline, or its task's
// cancellation (which resets the stream).
extension HTTP2Connection {
    /// Queues request-body bytes, then waits (up to `timeout`) while more than
    /// ``bodyBufferLimit`` of them wait for the peer's window. Returns false when the stream no
    /// longer takes a body (its response is complete, or it failed: the reader learns which).
    func sendBody(_ bytes: [UInt8], on id: Int32, end: Bool, timeout: Duration) async throws -> Bool {
        let open = withState { state -> Bool in
            guard let stream = state.streams[id], !stream.isFinished else { return false }
            state.session.sendBody(bytes, on: id, end: end)
            return true
        }
        guard open else { return false }
        await flush()
        let deadline = ContinuousClock.now + timeout
        var sweep = false
        var pump = false
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let wait = withState { state -> Bool in
                    guard var stream = state.streams[id], !stream.isFinished,
                        state.session.bufferedBody(on: id) > Self.bodyBufferLimit
                    else { return false }
                    stream.bodyWaiter = continuation
                    stream.deadline = (deadline, "\(origin) took no request body on stream \(id) for \(timeout)")
                    state.streams[id] = stream
                    sweep = Self.claimSweep(&state)
                    pump = Self.claimPump(&state)  // the peer's WINDOW_UPDATE has to be read
                    return true
                }
                if !wait { continuation.resume() }
                if sweep { scheduleSweep() }
                if pump { startPump() }
            }
        } onCancel: {
            interrupt(id, SesameError(.cancelled, "the request on stream \(id) to \(origin) was cancelled"))
        }
        return withState { $0.streams[id].map { !$0.isFinished } ?? false }
    }

    /// The next item of a stream's response, waiting up to `timeout` for it.
    /// - Throws: the stream's failure; ``SesameError/Code/timeout`` when nothing came in time, or
    ///   ``SesameError/Code/cancelled`` when the task was cancelled (the stream is then reset).
    func next(on id: Int32, timeout: Duration) async throws -> HTTP2StreamState.Item {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let item = try withState({ state in try state.streams[id]?.take() }) { return item }
            try await wait(on: id, until: deadline, timeout: timeout)
        }
    }

    /// The stream's next item, left for ``next(on:timeout:)``, once one arrived by `deadline`;
    /// nil when none did (the stream goes on).
    func peek(on id: Int32, until deadline: ContinuousClock.Instant) async throws -> HTTP2StreamState.Item? {
        while true {
            if let item = try withState({ state in try state.streams[id]?.peek() }) { return item }
            guard ContinuousClock.now < deadline else { return nil }
            try await wait(on: id, until: deadline, timeout: nil)
        }
    }

    /// Waits for the stream's next item; past `deadline` the stream fails with a timeout naming
    /// `timeout`, or with no `timeout` the wait alone ends.
    private func wait(on id: Int32, until deadline: ContinuousClock.Instant, timeout: Duration?) async throws {
        if let withdrawal = claimDirectRead(for: id) {
            await readDirectly(for: id, withdrawal: withdrawal, until: deadline, timeout: timeout)
            return
        }
        var sweep = false
        var pump = false
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let ready = withState { state -> Bool in
                    guard var stream = state.streams[id] else { return true }
                    if stream.hasItem { return true }
                    stream.waiter = continuation
                    stream.deadline = (deadline, timeout.map { Self.silence(origin, stream: id, for: $0) })
                    state.streams[id] = stream
                    sweep = Self.claimSweep(&state)
                    pump = Self.claimPump(&state)
                    return false
                }
                if ready { continuation.resume() }
                if sweep { scheduleSweep() }
                if pump { startPump() }
                // What a direct read would have sent with it (the HEADERS of a connection's only
                // stream) goes now.
                scheduleFlush()
            }
        } onCancel: {
            interrupt(id, SesameError(.cancelled, "the request on stream \(id) to \(origin) was cancelled"))
        }
    }

    // Waits end at their deadlines through one sweep of the connection's streams every
    // `sweepInterval` while any stream waits, not through a timer per wait (two trips to the loop
    // each, for every read of every stream). A timeout comes up to an interval late.
    static let sweepInterval = Duration.milliseconds(100)

    /// True when the caller is to start the sweep (none runs).
    private static func claimSweep(_ state: inout State) -> Bool {
        guard !state.sweeping else { return false }
        state.sweeping = true
        return true
    }

    private func scheduleSweep() {
        _ = LoopTimer(on: connection.loop, at: .now + Self.sweepInterval) { [self] in sweep() }
    }

    private func sweep() {
        let now = ContinuousClock.now
        var expired: [(Int32, String)] = []
        var wake: [CheckedContinuation<Void, any Error>] = []
        let again = withState { state -> Bool in
            var waiting = false
            for (id, var stream) in state.streams {
                guard let deadline = stream.deadline, stream.waiter != nil || stream.bodyWaiter != nil else { continue }
                if deadline.at > now {
                    waiting = true
                } else if let message = deadline.message {
                    expired.append((id, message))
                } else if let waiter = stream.waiter {
                    // A wait that only looks (`peek`) ends; the stream goes on.
                    wake.append(waiter)
                    stream.waiter = nil
                    stream.deadline = nil
                    state.streams[id] = stream
                }
            }
            state.sweeping = waiting
            return waiting
        }
        for continuation in wake { continuation.resume() }
        for (id, message) in expired { interrupt(id, SesameError(.timeout, message)) }
        if again { scheduleSweep() }
    }

    /// Ends a stream's wait with `error`, which the stream keeps; the stream is reset.
    func interrupt(_ id: Int32, _ error: SesameError) {
        var wake: [CheckedContinuation<Void, any Error>] = []
        withState { state in
            guard var stream = state.streams[id], !stream.isFinished else { return }
            stream.fail(error)
            stream.takeWaiters(&wake)
            state.streams[id] = stream
            state.session.cancel(id)
        }
        for continuation in wake { continuation.resume() }
        scheduleFlush()
    }
}
