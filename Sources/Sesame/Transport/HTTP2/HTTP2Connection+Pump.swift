// Frames in, to their streams (who reads is in HTTP2Connection+Reading.swift), and the writer
// (what the session has to send, out, by one task at a time so that frames keep their order), with
// what ends the connection (failure, GOAWAY, idleness).
extension HTTP2Connection {
    typealias Wake = [CheckedContinuation<Void, any Error>]

    /// Hands events to their streams; returns true when they retired the connection just now.
    func dispatch(_ events: [HTTP2Session.Event], _ state: inout State, _ wake: inout Wake) -> Bool {
        var retiredNow = false
        for event in events {
            switch event {
            case .settings(let maxConcurrentStreams):
                state.maxConcurrentStreams = max(1, min(maxConcurrentStreams, 1000))
            case .head(let id, let status, let fields):
                update(id, &state, &wake) { $0.append(.head(status: status, fields: fields)) }
            case .data(let id, let bytes):
                if state.streams[id] == nil {
                    // A stream given up on: its bytes still count against the connection's window.
                    state.session.consumed(bytes.count, on: id)
                } else {
                    update(id, &state, &wake) { $0.append(.data(bytes)) }
                }
            case .trailers(let id, let fields):
                // nghttp2 checked them (no pseudo-header; END_STREAM set).
                update(id, &state, &wake) { $0.append(.trailers(fields)) }
            case .end(let id):
                update(id, &state, &wake) { $0.append(.end) }
            case .reset(let id, let code, let reason):
                let error = Self.resetError(code, reason: reason, stream: id, origin: origin)
                update(id, &state, &wake) { $0.fail(error) }
            case .refused(let id, let reason):
                let error = SesameError(
                    .protocolError,
                    "HTTP/2: \(origin) broke the protocol on stream \(id), which was reset: \(reason)"
                )
                update(id, &state, &wake) { $0.fail(error) }
            case .goAway(let last, let code, let debug):
                state.lastProcessed = last
                let name = HTTP2Session.errorName(code)
                let said = debug.isEmpty ? name : "\(name): \(debug)"
                let error = SesameError(.connectionClosed, "\(origin) went away (GOAWAY \(said)) before this request")
                for id in state.streams.keys where id > last {
                    update(id, &state, &wake) {
                        $0.fail(HTTP2Exchange.Unprocessed(error, certain: true, requiresHTTP1: code == 0xd))
                    }
                }
                if !state.retired {
                    state.retired = true
                    retiredNow = true
                }
            case .pingAcknowledged:
                wake += state.pingWaiters
                state.pingWaiters.removeAll()
            }
        }
        return retiredNow
    }

    private func update(
        _ id: Int32,
        _ state: inout State,
        _ wake: inout Wake,
        _ change: (inout HTTP2StreamState) -> Void
    ) {
        // In place: a copy taken out of the dictionary shares its items with the one left behind,
        // and the first append would copy them all.
        state.streams[id]?.change(change, waking: &wake)
        // A stream that failed while its own task reads for the connection stops waiting for
        // bytes now (its reset may have been queued by the read that came before).
        if let read = state.directRead, read.stream == id, state.streams[id]?.isFinished == true {
            read.withdrawal.withdraw(from: connection)
            state.directRead = nil
        }
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

    /// The connection failed: every open stream fails with it. A stream that received nothing
    /// when the peer closed or reset the connection may be sent again (idempotent requests only:
    /// the server may have processed it).
    func fail(_ error: SesameError) {
        var wake = Wake()
        let retire = withState { failLocked(&$0, error, &wake) }
        for continuation in wake { continuation.resume() }
        if retire { notifyRetired() }
        close()
    }

    func failLocked(_ state: inout State, _ error: any Error, _ wake: inout Wake) -> Bool {
        let failure = error as? SesameError ?? SesameError(.protocolError, "\(origin): \(error)")
        if state.failure == nil { state.failure = failure }
        let lost = [SesameError.Code.connectionClosed, .connectionReset, .ioError].contains(failure.code)
        for id in state.streams.keys {
            update(id, &state, &wake) { stream in
                stream.fail(
                    lost && !stream.receivedAny ? HTTP2Exchange.Unprocessed(failure, certain: false) : failure
                )
            }
        }
        for waiter in state.pingWaiters { waiter.resume(throwing: failure) }
        state.pingWaiters.removeAll()
        guard !state.retired else { return false }
        state.retired = true
        return true
    }

    // MARK: Writing

    /// Starts a writer task unless one runs (it will pick up what was just queued) or nothing waits.
    /// The writer runs on the connection's event loop, as the pump does: the preface, SETTINGS
    /// ACKs and WINDOW_UPDATEs it carries must not wait for a busy concurrency pool (a peer may
    /// close a connection whose SETTINGS stay unacknowledged: nghttpd does after 10 s).
    func scheduleFlush() {
        if claimWriter() { Task(executorPreference: connection.loop) { await self.flushLoop() } }
    }

    /// Writes what waits on the calling task, unless a writer already runs (it will write it).
    /// The writes ignore the task's cancellation (`Connection.writeShared`): they carry other
    /// streams' frames too.
    func flush() async {
        if claimWriter() { await flushLoop() }
    }

    func claimWriter() -> Bool {
        withState { state -> Bool in
            guard !state.flushing, state.failure == nil, state.session.wantsWrite else { return false }
            state.flushing = true
            return true
        }
    }

    /// Writes while the session has something to send (the caller holds the writer role), then
    /// gives the role up.
    func flushLoop() async {
        while true {
            var wake = Wake()
            var output: [UInt8] = []
            let retire = withState { drainLocked(&$0, into: &output, &wake) }
            for continuation in wake { continuation.resume() }
            if retire { notifyRetired() }
            guard !output.isEmpty else { return }
            do {
                try await connection.writeShared(output)
            } catch {
                withState { $0.flushing = false }
                fail(error as? SesameError ?? SesameError(.ioError, "\(origin): \(error)"))
                return
            }
        }
    }

    /// Under the lock, for the writer: moves what the session has to send to `output`, and gives
    /// the writer role up when there is nothing. Returns true when this retired the connection.
    func drainLocked(_ state: inout State, into output: inout [UInt8], _ wake: inout Wake) -> Bool {
        var retire = false
        do {
            retire = dispatch(try state.session.drainOutput(into: &output), &state, &wake)
        } catch {
            // The streams fail with the reason; the GOAWAY that tells the server goes out
            // with the close (see `close()`).
            retire = failLocked(&state, error, &wake)
            state.goodbye = output
            output.removeAll()
        }
        // Body senders waiting for room get it once their bytes went to the session's output.
        for (id, var stream) in state.streams where stream.bodyWaiter != nil {
            if stream.isFinished || state.session.bufferedBody(on: id) <= Self.bodyBufferLimit,
                let waiter = stream.bodyWaiter
            {
                wake.append(waiter)
                stream.bodyWaiter = nil
                state.streams[id] = stream
            }
        }
        if output.isEmpty { state.flushing = false }
        return retire
    }

    // MARK: Ending

    /// Sends a PING and waits for its acknowledgement: the connection is alive.
    func ping(timeout: Duration) async throws {
        let timer = LoopTimer(on: connection.loop, at: .now + timeout) { [self] in
            fail(SesameError(.timeout, "\(origin) did not answer an HTTP/2 PING within \(timeout)"))
        }
        defer { timer.cancel() }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            var pump = false
            let failure = withState { state -> SesameError? in
                if let failure = state.failure { return failure }
                state.session.ping()
                state.pingWaiters.append(continuation)
                pump = Self.claimPump(&state)
                return nil
            }
            if pump { startPump() }
            if let failure {
                continuation.resume(throwing: failure)
            } else {
                scheduleFlush()
            }
        }
    }

    /// Closes the connection once no stream is left: GOAWAY, then the socket. Idle connections
    /// the pool closes come here; streams still open keep the connection until they finish.
    func retire() {
        let (closeNow, first) = withState { state -> (Bool, Bool) in
            let first = !state.retired
            if first {
                state.retired = true
                state.session.goAway()
            }
            return (state.reserved == 0, first)
        }
        if first { notifyRetired() }
        scheduleFlush()
        if closeNow { close() }
    }

    /// After `idleTimeout` without a new stream, the connection is retired.
    /// One idle timer at a time per connection (a timer per finished stream would keep one alive
    /// for every request of the last idle timeout): when it fires early, because the connection
    /// was busy in between, it is set again for what is left.
    func scheduleIdleClose() {
        let start = withState { state -> Bool in
            guard !state.idleTimerPending else { return false }
            state.idleTimerPending = true
            return true
        }
        if start { armIdleTimer(at: .now + idleTimeout) }
    }

    /// The timer holds the connection weakly: a connection its server retired (GOAWAY after a
    /// thousand requests is nginx's default) is freed as soon as its pool and streams let it go,
    /// not an idle timeout later with its session, buffers and TLS state.
    private func armIdleTimer(at deadline: ContinuousClock.Instant) {
        _ = LoopTimer(on: connection.loop, at: deadline) { [weak self] in
            guard let self else { return }
            let now = ContinuousClock.now
            let (expired, next) = withState { state -> (Bool, ContinuousClock.Instant?) in
                guard state.reserved == 0, let since = state.idleSince else {
                    state.idleTimerPending = false  // busy: the next idle moment sets it again
                    return (false, nil)
                }
                if now - since >= idleTimeout {
                    state.idleTimerPending = false
                    return (true, nil)
                }
                return (false, since + idleTimeout)
            }
            if expired { retire() }
            if let next { armIdleTimer(at: next) }
        }
    }

    func close() {
        Task {
            // What is still queued (a GOAWAY) goes first, unless the connection already failed.
            var output: [UInt8] = []
            withState { state in
                output = state.goodbye
                if state.failure == nil { _ = try? state.session.drainOutput(into: &output) }
            }
            if !output.isEmpty { try? await connection.writeShared(output) }
            await connection.close()
        }
    }
}
