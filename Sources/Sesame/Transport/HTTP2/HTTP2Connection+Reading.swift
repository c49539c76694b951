// Who reads an HTTP/2 connection, and when.
//
// Reading is a role one reader holds at a time (`State.reading`): the read pump, a task on the
// connection's event loop, or the task of the connection's only stream.
// - The connection's only stream, when it waits for its response and nobody reads, reads
//   itself, as an HTTP/1.1 exchange does: its task sends the request and starts the read in one
//   trip through the loop, is resumed with the answer's bytes, hands them to the session and
//   goes on. Left to the pump, every response would cost one more task hop.
// - The pump reads while more than one stream is open, or any stream, PING or request body
//   waits for a reader; it stops when none does. A wait that finds nobody reading starts it.
// - While nobody reads, the loop still watches the socket: what arrives unasked (SETTINGS, a
//   PING, GOAWAY, the peer closing) starts the pump (`Connection.unsolicitedInputHandler`).
// The role changes hands under the state lock, in the same step as the bytes that were read are
// dispatched, so a stream never waits with nobody reading.
extension HTTP2Connection {
    /// Whether the pump has a reason to read: more than one stream is open, or a PING, a
    /// stream's reader or a request body waits for what is to come.
    static func needsPump(_ state: State) -> Bool {
        guard state.failure == nil else { return false }
        if state.reserved > 1 || !state.pingWaiters.isEmpty { return true }
        return state.streams.values.contains { $0.waiter != nil || $0.bodyWaiter != nil }
    }

    /// Under the lock: true when the caller is to start the pump (nobody reads, and someone needs it).
    static func claimPump(_ state: inout State) -> Bool {
        guard !state.reading, needsPump(state) else { return false }
        state.reading = true
        return true
    }

    /// Starts the pump, which holds the reading role (claimed under the lock just before).
    func startPump() {
        Task(executorPreference: connection.loop) { await self.pump() }
    }

    /// Bytes came (or may have come) while no read waited: the pump reads them. When a reader
    /// holds the role, it reads them if it reads again; if it lets the role go instead, the pump
    /// takes it then (`releaseReading`). The connection tells this once and does not watch the
    /// socket again before the next read, so the bytes are never left unread.
    func unsolicitedInput() {
        let start = withState { state -> Bool in
            guard state.failure == nil else { return false }
            guard !state.reading else {
                state.unreadInput = true
                return false
            }
            state.reading = true
            return true
        }
        if start { startPump() }
    }

    /// Under the lock: the reader lets the role go. True when the caller is to start the pump,
    /// which then holds it: someone needs it, or bytes came unasked meanwhile.
    static func releaseReading(_ state: inout State) -> Bool {
        state.reading = false
        if claimPump(&state) {
            state.unreadInput = false
            return true
        }
        guard state.unreadInput, state.failure == nil else { return false }
        state.unreadInput = false
        state.reading = true
        return true
    }

    /// Reads and hands out what arrives while the pump is needed (``needsPump(_:)``), at least once.
    ///
    /// The pump runs on the connection's event loop (it prefers the loop as its executor): the
    /// bytes it reads resume it there without a thread wake-up, and it only feeds the session and
    /// resumes the streams' tasks, taking the state lock that no one holds across a suspension.
    func pump() async {
        while true {
            let bytes: [UInt8]
            do {
                bytes = try await connection.read(maxLength: Self.readSize)
            } catch {
                fail(error as? SesameError ?? SesameError(.ioError, "\(origin): \(error)"))
                return
            }
            guard await ingest(bytes, goOn: { Self.needsPump($0) }) else { return }
        }
    }

    /// How much one read asks for.
    static let readSize = 65_536

    /// Hands `bytes` (empty: the peer closed) to the session and its events to the streams, then
    /// gives up the reading role unless `goOn` says the reader keeps it; sends what the session
    /// has to send. Returns whether the reader goes on reading.
    private func ingest(_ bytes: [UInt8], goOn: (State) -> Bool) async -> Bool {
        guard !bytes.isEmpty else {
            fail(SesameError(.connectionClosed, "\(origin) closed the HTTP/2 connection"))
            return false
        }
        var wake = Wake()
        var pump = false
        let (retire, keeps) = withState { state -> (Bool, Bool) in
            state.directRead = nil  // the read that brought `bytes` has ended
            let retire: Bool
            do {
                retire = dispatch(try state.session.receive(bytes), &state, &wake)
            } catch {
                retire = failLocked(&state, error, &wake)
            }
            if state.failure == nil, goOn(state) {
                state.unreadInput = false  // the reader's next read takes them
                return (retire, true)
            }
            pump = Self.releaseReading(&state)
            return (retire, false)
        }
        for continuation in wake { continuation.resume() }
        if retire { notifyRetired() }
        if pump { startPump() }
        await flush()
        return keeps
    }

    /// Under the lock: whether stream `id`, which has nothing to take, reads the connection
    /// itself (it is the only stream, and nobody reads); what ends that read when the stream
    /// fails meanwhile.
    func claimDirectRead(for id: Int32) -> ReadWithdrawal? {
        withState { state in
            guard !state.reading, state.reserved == 1, state.failure == nil,
                let stream = state.streams[id], !stream.hasItem
            else { return nil }
            state.reading = true
            let withdrawal = ReadWithdrawal()
            state.directRead = (id, withdrawal)
            return withdrawal
        }
    }

    /// Stream `id`'s task reads the connection once for every stream (the role claimed by
    /// ``claimDirectRead(for:)``), waiting until `deadline`. Past it, the stream fails with a
    /// timeout naming `timeout` (with no `timeout`, only the wait ends); the task's cancellation
    /// resets the stream and leaves the connection be.
    func readDirectly(
        for id: Int32,
        withdrawal: ReadWithdrawal,
        until deadline: ContinuousClock.Instant,
        timeout: Duration?
    ) async {
        let output = outputToSendWithRead()
        var sent: (@Sendable () -> Void)?
        if !output.isEmpty { sent = { self.writtenWithRead() } }
        let bytes: [UInt8]?
        do {
            bytes = try await connection.readShared(
                maxLength: Self.readSize,
                waitingAtMost: max(.zero, ContinuousClock.now.duration(to: deadline)),
                sending: output,
                sent: sent,
                withdrawal: withdrawal
            )
        } catch {
            fail(error as? SesameError ?? SesameError(.ioError, "\(origin): \(error)"))
            return
        }
        guard let bytes else {
            let pump = withState { state -> Bool in
                state.directRead = nil
                return Self.releaseReading(&state)
            }
            if pump { startPump() }
            if Task.isCancelled {
                interrupt(id, SesameError(.cancelled, "the request on stream \(id) to \(origin) was cancelled"))
            } else if let timeout, ContinuousClock.now >= deadline {
                interrupt(id, SesameError(.timeout, Self.silence(origin, stream: id, for: timeout)))
            }
            return
        }
        _ = await ingest(bytes, goOn: { _ in false })
    }

    /// What the session has to send (the stream's HEADERS, when it is new), to go out with the
    /// direct read in one trip through the loop: the read then waits before the answer can
    /// come, and a caller's thread may wait for it. Sent on their own first, the answer could
    /// come while no read waited, and the loop, woken for it, would have the pump read it.
    /// Takes the writer role when there is something (nothing when another writer holds it:
    /// that writer sends it).
    private func outputToSendWithRead() -> [UInt8] {
        var wake = Wake()
        var output: [UInt8] = []
        let retire = withState { state -> Bool in
            guard !state.flushing, state.failure == nil, state.session.wantsWrite else { return false }
            state.flushing = true
            return drainLocked(&state, into: &output, &wake)
        }
        for continuation in wake { continuation.resume() }
        if retire { notifyRetired() }
        return output
    }

    /// On the loop, once the output that went with a direct read was handed to the connection
    /// (in order: the next writer's bytes come after it): the writer role goes to a writer task
    /// when there is more to send, or is given up.
    private func writtenWithRead() {
        let more = withState { state -> Bool in
            if state.failure == nil, state.session.wantsWrite { return true }
            state.flushing = false
            return false
        }
        if more { Task(executorPreference: connection.loop) { await self.flushLoop() } }
    }

    /// What a stream's timeout says.
    static func silence(_ origin: Origin, stream id: Int32, for timeout: Duration) -> String {
        "\(origin) sent nothing on stream \(id) for \(timeout)"
    }
}
