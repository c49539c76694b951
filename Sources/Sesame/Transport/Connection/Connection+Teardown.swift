import FoundationEssentials
import Glibc

// Timers that end a connection, failing it, and releasing its socket and TLS session. Everything
// here runs on the connection's event loop.
extension Connection {
    func armHandshakeTimer() {
        if let handshakeTimer { loop.cancelTimer(handshakeTimer) }
        let limit = configuration.handshakeTimeout
        handshakeTimer = loop.scheduleTimer(after: limit) { [weak self] in
            guard let self else { return }
            fail(SesameError(.timeout, "TLS handshake with \(host):\(port) did not finish within \(limit)"))
        }
    }

    func cancelHandshakeTimer() {
        if let handshakeTimer { loop.cancelTimer(handshakeTimer) }
        handshakeTimer = nil
    }

    /// Connecting as a whole (TCP, then the TLS handshake and the decisions it waits for) ends at
    /// ``connectTimeout`` from now; the handshake's own timeout, which stops while a delegate
    /// decides, applies within it.
    func armEstablishTimer() {
        cancelEstablishTimer()
        let limit = connectTimeout
        establishTimer = loop.scheduleTimer(after: limit) { [weak self] in
            guard let self else { return }
            let stage = phase == .handshaking ? "the TLS handshake did not finish" : "no TCP connection"
            fail(SesameError(.connectTimeout, "\(host):\(port): \(stage) within the connect timeout (\(limit))"))
        }
    }

    func cancelEstablishTimer() {
        if let establishTimer { loop.cancelTimer(establishTimer) }
        establishTimer = nil
    }

    /// Fails every waiting operation with `error` and releases the socket and the TLS session.
    func fail(_ error: SesameError) {
        assert(loop.inEventLoop)
        guard phase != .closed else { return }
        failure = error
        phase = .closed
        knownClosedBox.store(true, ordering: .releasing)
        cancelHandshakeTimer()
        cancelEstablishTimer()
        if let readWatchdog { loop.cancelTimer(readWatchdog.handle) }
        readWatchdog = nil
        connector?.cancel(error)
        connector = nil
        let connecting = connectContinuation
        connectContinuation = nil
        let reading = pendingRead?.continuation
        if reading != nil { clearPendingRead() }
        let writes = pendingWrites
        pendingWrites.removeAll()
        // Released before anyone waiting learns of the failure: a caller that then ends the
        // process (the command-line tool on a refused certificate) finds nothing half freed.
        tearDown()
        connecting?.resume(throwing: error)
        reading?.resume(throwing: error)
        for continuation in writes { continuation.resume(throwing: error) }
    }

    func closeNow() {
        guard phase != .closed else { return }
        if phase == .established, let tls {
            tls.close()  // queues close_notify
            flushOutbound()
            if let carrier {  // and the tunnel's
                carrier.close()
                flushOutbound()
            }
        }
        fail(SesameError(.connectionClosed, "\(host):\(port): the connection was closed"))
    }

    func tearDown() {
        channel?.close()
        channel = nil
        readState = .inactive
        tls = nil  // the engine, and with it the SSL and its BIOs, is freed here
        carrier = nil
    }
}
