import FoundationEssentials
import Glibc

// Moving bytes: socket events, ciphertext to and from the kernel, and writes (reads are served in
// Connection+Input.swift).
// Everything here runs on the connection's event loop.
extension Connection {
    // MARK: Events

    func socketEvent(_ events: UInt32) {
        guard phase != .closed else { return }
        if events & EpollEvents.peerClosed != 0 {
            // No answer comes after what the kernel holds: the pool does not hand it out again.
            peerClosed = true
            knownClosedBox.store(true, ordering: .releasing)
        }
        let unasked =
            phase == .established && pendingRead == nil
            && events & (EpollEvents.readable | EpollEvents.peerClosed | EpollEvents.hangUp | EpollEvents.error) != 0
        if unasked, events & EpollEvents.readable != 0 { readState.unaskedBytesArrived() }
        if events & EpollEvents.writable != 0 { flushOutbound() }
        if events & (EpollEvents.readable | EpollEvents.error | EpollEvents.hangUp) != 0 {
            readFromSocket()
        } else if events & EpollEvents.peerClosed != 0 {
            readUpToPeerEnd()
        }
        progress()
        if unasked, let handler = unsolicitedInputHandler.withLock({ $0 }) { handler() }
    }

    /// How much ciphertext a connection holds before OpenSSL reads it: one socket read's worth,
    /// at least one whole record (so that a record can always complete).
    static let inboundCapacity = 65_536

    /// Reads what the socket holds (as much as there is room for); returns how many bytes came.
    @discardableResult
    func readFromSocket() -> Int {
        guard let channel, !socketEOF else { return 0 }
        guard let engine = carrier ?? tls else {
            let buffer = loop.readBuffer
            let result = channel.read(into: buffer)
            ingestSocketResult(result)
            if case .done(let count) = result { return count }
            return 0
        }
        // TLS: straight into the engine's free inbound space (no copy; when it is full, the
        // bytes wait in the kernel until OpenSSL has read some). The space is contiguous up to
        // the end of the engine's ring, so a read that fills it is followed by one into the space
        // after the wrap. Through a tunnel, the carrier's plaintext then goes on to `tls`.
        var total = 0
        defer { if carrier != nil { pumpCarrier() } }
        for _ in 0..<2 {
            guard let space = engine.inboundSpace() else { return total }
            let result = channel.read(into: space)
            guard case .done(let count) = result else {
                ingestSocketResult(result)
                return total
            }
            engine.commitInbound(count)
            total += count
            if count < space.count { return total }
        }
        return total
    }

    /// Reads what the peer sent before closing, up to the end of the stream or until the buffer
    /// is full (a caller's read takes it from there), so that an idle connection is closed and
    /// no longer watched.
    private func readUpToPeerEnd() {
        while !socketEOF, phase != .closed {
            if readFromSocket() == 0 { break }
        }
    }

    /// Notes what a socket read gave: bytes (only a plain connection's reach here, in the loop's
    /// buffer; TLS bytes are already in the engine), the end of the stream or a failure.
    private func ingestSocketResult(_ result: Socket.IOResult) {
        switch result {
        case .done(let count):
            if inboundOffset == inbound.count {
                inbound.removeAll(keepingCapacity: true)
                inboundOffset = 0
            }
            inbound.append(contentsOf: UnsafeRawBufferPointer(rebasing: loop.readBuffer[0..<count]))
        case .wouldBlock:
            break
        case .endOfFile:
            socketEOF = true
            knownClosedBox.store(true, ordering: .releasing)
        case .failed(let code):
            // Not failed yet: what arrived before the reset (often an alert) explains it better.
            socketEOF = true
            knownClosedBox.store(true, ordering: .releasing)
            socketError = SesameError(
                code == ECONNRESET ? .connectionReset : .ioError,
                "\(host):\(port): \(errnoText(code))"
            )
        }
    }

    /// Fails with the reason the peer gave (an alert it sent before closing), else with `fallback`.
    func failExplained(_ fallback: SesameError) {
        guard phase != .closed else { return }
        guard let tls else {
            fail(fallback)
            return
        }
        while !socketEOF, phase != .closed {
            if readFromSocket() == 0 { break }
        }
        socketEOF = true
        if socketError == nil { socketError = fallback }
        if phase == .handshaking {
            driveHandshake()  // fails with the alert's reason, or with `socketError`
            return
        }
        if phase == .established, let alert = carrier?.receivedAlert() ?? tls.receivedAlert() {
            fail(alert)
            return
        }
        fail(fallback)
    }

    /// Moves the state forward after bytes arrived or a decision came back.
    func progress() {
        switch phase {
        case .handshaking:
            if readState == .awaitingDecision {
                if socketEOF {
                    fail(
                        SesameError(
                            .connectionClosed,
                            "\(host):\(port) closed the connection while the handshake waited for a decision"
                        )
                    )
                }
            } else {
                driveHandshake()
            }
        case .established:
            serveRead()
        case .idle, .connecting, .closed:
            break
        }
        updateInterest()
    }

    func updateInterest() {
        guard let channel, channel.isRegistered, phase != .closed else { return }
        var interest = readState.interest(inputEnded: socketEOF)
        if channel.hasPendingOutput { interest |= EpollEvents.writable }
        if socketEOF && interest == 0 {
            // A closed peer keeps the socket readable (and may report HUP): stop watching it.
            channel.stopWatching()
            return
        }
        channel.watch(interest)
    }

    // MARK: Output

    /// Moves bytes (ciphertext from OpenSSL, or plain bytes) to the kernel; completes writes once
    /// everything left.
    func flushOutbound() {
        guard let channel else { return }
        if carrier != nil, !carryOutput() { return }
        if let engine = carrier ?? tls, engine.pendingOutput > 0 {
            channel.appendOutput { engine.drainOutput(into: &$0) }
        }
        switch channel.flush() {
        case .wouldBlock:
            return
        case .failed(let code):
            failExplained(
                SesameError(
                    code == EPIPE || code == ECONNRESET ? .connectionReset : .ioError,
                    "\(host):\(port): \(errnoText(code))"
                )
            )
            return
        case .flushed:
            let waiting = pendingWrites
            pendingWrites.removeAll()
            for continuation in waiting { continuation.resume() }
        }
    }

    func startWrite(_ bytes: [UInt8], continuation: CheckedContinuation<Void, any Error>) {
        do {
            try enqueue(bytes)
        } catch {
            continuation.resume(throwing: error)
            return
        }
        pendingWrites.append(continuation)
        flushOutbound()
        updateInterest()
    }

    /// Writes `bytes`, then reads as ``startRead(maxLength:timeout:continuation:)`` does: one hop
    /// to the loop for a request and the first bytes of its response.
    func startWriteThenRead(
        _ bytes: [UInt8],
        maxLength: Int,
        timeout: Duration?,
        endsQuietly: Bool = false,
        continuation: ReadContinuation
    ) {
        do {
            try enqueue(bytes)
        } catch {
            continuation.resume(throwing: error)
            return
        }
        flushOutbound()  // a failure here fails the connection, and the read below with it
        startRead(maxLength: maxLength, timeout: timeout, endsQuietly: endsQuietly, continuation: continuation)
    }

    /// Hands `bytes` to the TLS engine (or the plain outbound buffer); the caller flushes.
    private func enqueue(_ bytes: [UInt8]) throws {
        guard phase == .established else {
            throw failure ?? SesameError(.connectionClosed, "\(host):\(port): the connection is closed")
        }
        guard let tls else {
            guard let channel else {
                throw failure ?? SesameError(.connectionClosed, "\(host):\(port): the connection is closed")
            }
            channel.enqueue(bytes)
            return
        }
        do {
            try tls.write(bytes)
        } catch {
            fail(error)
            throw error
        }
    }
}
