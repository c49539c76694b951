internal import COpenSSL
import Foundation

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
        unsolicitedInput = false
        serveRead()
        if drainingSocket, pendingRead != nil, !socketEOF {
            readFromSocket()
            serveRead()
        }
        if pendingRead != nil {
            let now = ContinuousClock.now
            waitStartedAt = now
            if let timeout { watchRead(until: now + timeout, timeout: timeout) }
        }
        updateInterest()
    }

    func serveRead() {
        guard let (maxLength, continuation) = pendingRead else { return }
        guard let ssl else {
            servePlainRead(maxLength: maxLength, continuation: continuation)
            return
        }
        let waiting = Int(BIO_ctrl_pending(readBIO)) + Int(SSL_pending(ssl))
        if waiting == 0, !socketEOF, SSL_has_pending(ssl) == 0, SSL_get_shutdown(ssl) & SSL_RECEIVED_SHUTDOWN == 0 {
            // Nothing to decrypt and nothing to learn (the stream is open, no record is partly
            // read, the peer has not closed): the read waits for the socket. SSL_read would only
            // report that, fetching and freeing a record buffer to do so.
            return
        }
        OpenSSLErrorStack.clear()
        // What arrived bounds what decrypts: ciphertext not yet read by OpenSSL, plaintext it holds,
        // and at most one partial record it buffers (it reads no further ahead). The bytes are
        // decrypted straight into an array of that size, or of `maxLength` when less (what
        // remains is served next). A TLS record holds at most 16 KiB: this keeps reading what is
        // here, so a large body takes one hop per socket read rather than one per record. With
        // nothing here, the read only learns why (want more, closed, an alert), decrypting into
        // the loop's scratch space.
        var arrived = waiting
        if arrived > 0, SSL_has_pending(ssl) != 0 { arrived += Connection.largestRecord }
        var count: Int32 = 0
        let buffer: [UInt8]
        if arrived > 0 {
            let limit = min(maxLength, arrived)
            buffer = [UInt8](unsafeUninitializedCapacity: limit) { space, initialized in
                initialized = decrypt(ssl, into: UnsafeMutableRawBufferPointer(space), result: &count)
            }
        } else {
            let scratch = loop.decryptBuffer
            let filled = decrypt(
                ssl,
                into: UnsafeMutableRawBufferPointer(rebasing: scratch[0..<min(maxLength, scratch.count)]),
                result: &count
            )
            buffer = [UInt8](UnsafeRawBufferPointer(rebasing: scratch[0..<filled]))
        }
        flushOutbound()  // reading can produce output (alerts, key updates)
        if count > 0 {
            clearPendingRead()
            resume(continuation, with: buffer)
            return
        }
        let code = SSL_get_error(ssl, count)
        switch code {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            if socketEOF {
                if let socketError {
                    fail(socketError)
                } else {
                    endOfStream(closeNotify: false)
                }
            }
        case SSL_ERROR_ZERO_RETURN:
            endOfStream(closeNotify: true)
        default:
            let stack = OpenSSLErrorStack.drain()
            if stack.contains(library: ERR_LIB_SSL, reason: SSL_R_UNEXPECTED_EOF_WHILE_READING) {
                endOfStream(closeNotify: false)
            } else {
                fail(mapTLSError(code, stack, during: "read"))
            }
        }
    }

    /// The most a TLS record's ciphertext can hold (RFC 8446 section 5.2: 2^14 + 256).
    static let largestRecord = 16_384 + 256

    /// Decrypts into `space` until it is full or nothing more is here; returns how many bytes it
    /// holds. `result` is SSL_read's last result when nothing was decrypted, else the count.
    private func decrypt(_ ssl: OpaquePointer, into space: UnsafeMutableRawBufferPointer, result: inout Int32) -> Int {
        var filled = 0
        while filled < space.count {
            // safe: `space` is not empty, so baseAddress is not nil.
            let read = SSL_read(ssl, space.baseAddress! + filled, Int32(space.count - filled))
            if read <= 0 {
                if filled == 0 { result = read }
                break
            }
            filled += Int(read)
            result = Int32(filled)
            // Nothing held and nothing more arrived: another SSL_read could only say so.
            if SSL_pending(ssl) == 0, BIO_ctrl_pending(readBIO) == 0 { break }
        }
        return filled
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
        readAnswered()
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
