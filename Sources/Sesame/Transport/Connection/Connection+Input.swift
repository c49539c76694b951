import FoundationEssentials
import Glibc

// Serving reads: a waiting read is answered with what decrypts (or, without TLS, what arrived),
// with the end of the stream, or with the failure that ended it. Everything here runs on the
// connection's event loop.
extension Connection {
    /// Starts a read. With `drainingSocket`, the socket is read at once when nothing decrypted is
    /// waiting (a body's next bytes are often already there: no trip through epoll for them).
    func startRead(
        maxLength: Int,
        timeout: Duration?,
        drainingSocket: Bool = false,
        endsQuietly: Bool = false,
        continuation: ReadContinuation
    ) {
        guard phase == .established, pendingRead == nil else {
            let error =
                phase == .established
                ? SesameError(.invalidArgument, "only one read at a time")
                : failure ?? SesameError(.connectionClosed, "\(host):\(port): the connection is closed")
            continuation.resume(throwing: error)
            return
        }
        pendingRead = (maxLength, continuation)
        readEndsQuietly = endsQuietly
        readState.readStarted()
        serveRead()
        if drainingSocket, pendingRead != nil, !socketEOF {
            readFromSocket()
            serveRead()
        }
        if pendingRead != nil, let timeout { watchRead(until: .now + timeout, timeout: timeout) }
        updateInterest()
    }

    func serveRead() {
        guard let (maxLength, continuation) = pendingRead else { return }
        guard let tls else {
            servePlainRead(maxLength: maxLength, continuation: continuation)
            return
        }
        if carrier != nil { pumpCarrier() }
        let scratch = loop.decryptBuffer
        let outcome = tls.read(maxLength: maxLength, inputEnded: socketEOF, scratch: scratch)
        // Reading can produce output (alerts, key updates), in either layer.
        if tls.pendingOutput > 0 || (carrier?.pendingOutput ?? 0) > 0 { flushOutbound() }
        switch outcome {
        case .bytes(let bytes):
            clearPendingRead()
            resume(continuation, with: bytes)
        case .needsInput:
            break  // the read waits for the socket
        case .truncated:
            if let socketError { fail(socketError) } else { endOfStream(closeNotify: false) }
        case .closeNotify:
            endOfStream(closeNotify: true)
        case .failed(let error):
            fail(error)
        }
    }

    private func servePlainRead(maxLength: Int, continuation: ReadContinuation) {
        if inboundOffset < inbound.count {
            let end = min(inbound.count, inboundOffset + maxLength)
            let bytes = Array(inbound[inboundOffset..<end])
            inboundOffset = end
            clearPendingRead()
            resume(continuation, with: bytes)
        } else if socketEOF {
            if let socketError {
                fail(socketError)
            } else {
                clearPendingRead()
                continuation.resume(returning: [])
            }
        }
    }

    /// The waiting read is answered (its deadline goes with it; the watchdog stays, see `watchRead`).
    func clearPendingRead() {
        pendingRead = nil
        readDeadline = nil
        readEndsQuietly = false
        readState.readAnswered()
    }

    func endOfStream(closeNotify: Bool) {
        guard let (_, continuation) = pendingRead else { return }
        clearPendingRead()
        if !closeNotify { closedWithoutNotifyBox.store(true, ordering: .relaxed) }
        continuation.resume(returning: [])
    }

    /// Resumes a read's caller with `bytes`: at the end of the loop's batch of events when it
    /// is delivering several (their tasks then reach the concurrency threads together), else now.
    private func resume(_ continuation: ReadContinuation, with bytes: [UInt8]) {
        if loop.isDeliveringBatch {
            loop.deferToBatchEnd { continuation.resume(returning: bytes) }
        } else {
            continuation.resume(returning: bytes)
        }
    }
}
