internal import COpenSSL

// Ciphertext in and out, and application data through the records.
extension TLSEngine {
    // MARK: Ciphertext in

    /// The free space ciphertext can be written into without a copy (a socket read straight into
    /// it), contiguous up to the end of the BIO pair's ring; nil when the buffer is full (the
    /// bytes then wait where they are until OpenSSL has read some). Follow with
    /// ``commitInbound(_:)``.
    func inboundSpace() -> UnsafeMutableRawBufferPointer? {
        var space: UnsafeMutablePointer<CChar>?
        let free = Int(BIO_nwrite0(objects.inboundBIO, &space))
        guard free > 0, let space else { return nil }
        return UnsafeMutableRawBufferPointer(start: space, count: free)
    }

    /// Takes the first `count` bytes written into ``inboundSpace()``.
    func commitInbound(_ count: Int) {
        guard count > 0 else { return }
        _ = BIO_nwrite(objects.inboundBIO, nil, Int32(count))
    }

    /// Copies as much of `bytes` as fits (the ring wraps, so up to two spans); returns how many
    /// were taken. The rest is offered again once OpenSSL has read some.
    func receive(_ bytes: UnsafeRawBufferPointer) -> Int {
        var taken = 0
        while taken < bytes.count, let space = inboundSpace() {
            let count = min(space.count, bytes.count - taken)
            space.copyMemory(from: UnsafeRawBufferPointer(rebasing: bytes[taken..<taken + count]))
            commitInbound(count)
            taken += count
        }
        return taken
    }

    /// Ciphertext received and not yet read by OpenSSL.
    var bufferedCiphertext: Int { Int(BIO_ctrl_pending(objects.readBIO)) }

    // MARK: Ciphertext out

    /// Ciphertext waiting to be sent.
    var pendingOutput: Int { Int(BIO_ctrl_pending(objects.writeBIO)) }

    /// Moves the ciphertext waiting to be sent to the end of `buffer`.
    func drainOutput(into buffer: inout [UInt8]) {
        let pending = pendingOutput
        guard pending > 0 else { return }
        let start = buffer.count
        buffer.append(contentsOf: repeatElement(0, count: pending))
        // safe: the buffer holds at least `pending` > 0 bytes, so baseAddress is not nil.
        let read = buffer.withUnsafeMutableBytes { BIO_read(objects.writeBIO, $0.baseAddress! + start, Int32(pending)) }
        if read < pending { buffer.removeLast(pending - max(0, Int(read))) }
    }

    // MARK: Application data

    /// Encrypts `bytes` into records (sent with the rest of ``drainOutput(into:)``).
    /// - Throws: ``SesameError/Code/invalidArgument`` before the handshake is established; the TLS
    ///   failure otherwise (the session is then unusable).
    func write(_ bytes: [UInt8]) throws(SesameError) {
        guard isEstablished else {
            throw SesameError(
                .invalidArgument,
                "\(serverName):\(port): no data before the TLS handshake is established"
            )
        }
        var offset = 0
        OpenSSLErrorStack.clear()
        while offset < bytes.count {
            let chunk = min(bytes.count - offset, Int(Int32.max))
            // safe: `bytes` is not empty here, so baseAddress is not nil.
            let written = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + offset, Int32(chunk)) }
            guard written > 0 else {
                throw error(for: SSL_get_error(ssl, written), OpenSSLErrorStack.drain(), during: "write")
            }
            offset += Int(written)
        }
    }

    /// What a read gave.
    enum ReadOutcome: Equatable {
        case bytes([UInt8])
        /// Nothing to decrypt yet: more ciphertext is needed.
        case needsInput
        /// The peer ended the stream with close_notify.
        case closeNotify
        /// The stream ended without close_notify (`inputEnded`, or OpenSSL saw an unexpected EOF).
        case truncated
        case failed(SesameError)
    }

    /// Decrypts up to `maxLength` bytes. With `inputEnded` (no more ciphertext will come), a read
    /// that needs more reports ``ReadOutcome/truncated``. `scratch` takes the decryption when
    /// nothing is here, which only learns why (want more, closed, an alert).
    func read(maxLength: Int, inputEnded: Bool, scratch: UnsafeMutableRawBufferPointer) -> ReadOutcome {
        let waiting = bufferedCiphertext + Int(SSL_pending(ssl))
        if waiting == 0, !inputEnded, SSL_has_pending(ssl) == 0, SSL_get_shutdown(ssl) & SSL_RECEIVED_SHUTDOWN == 0 {
            // Nothing to decrypt and nothing to learn (the stream is open, no record is partly
            // read, the peer has not closed). SSL_read would only report that, fetching and
            // freeing a record buffer to do so.
            return .needsInput
        }
        OpenSSLErrorStack.clear()
        // What arrived bounds what decrypts: ciphertext not yet read by OpenSSL, plaintext it holds,
        // and at most one partial record it buffers (it reads no further ahead). The bytes are
        // decrypted straight into an array of that size, or of `maxLength` when less (what
        // remains is served next). A record holds at most 16 KiB: this keeps reading what is
        // here, so a large body takes one hop per socket read rather than one per record.
        var arrived = waiting
        if arrived > 0, SSL_has_pending(ssl) != 0 { arrived += TLSEngine.largestRecord }
        var count: Int32 = 0
        let buffer: [UInt8]
        if arrived > 0 {
            let limit = min(maxLength, arrived)
            buffer = [UInt8](unsafeUninitializedCapacity: limit) { space, initialized in
                initialized = decrypt(into: UnsafeMutableRawBufferPointer(space), result: &count)
            }
        } else {
            let space = UnsafeMutableRawBufferPointer(rebasing: scratch[0..<min(maxLength, scratch.count)])
            let filled = decrypt(into: space, result: &count)
            buffer = [UInt8](UnsafeRawBufferPointer(rebasing: space[0..<filled]))
        }
        if count > 0 { return .bytes(buffer) }
        let code = SSL_get_error(ssl, count)
        switch code {
        case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
            return inputEnded ? .truncated : .needsInput
        case SSL_ERROR_ZERO_RETURN:
            return .closeNotify
        default:
            let stack = OpenSSLErrorStack.drain()
            if stack.contains(library: ERR_LIB_SSL, reason: SSL_R_UNEXPECTED_EOF_WHILE_READING) { return .truncated }
            return .failed(error(for: code, stack, during: "read"))
        }
    }

    /// Decrypts into `space` until it is full or nothing more is here; returns how many bytes it
    /// holds. `result` is SSL_read's last result when nothing was decrypted, else the count.
    private func decrypt(into space: UnsafeMutableRawBufferPointer, result: inout Int32) -> Int {
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
            if SSL_pending(ssl) == 0, bufferedCiphertext == 0 { break }
        }
        return filled
    }

    // MARK: Closing

    /// Queues close_notify (sent with ``drainOutput(into:)``); best effort.
    func close() {
        guard isEstablished else { return }
        OpenSSLErrorStack.clear()
        _ = SSL_shutdown(ssl)
        _ = OpenSSLErrorStack.drain()
    }

    /// The reason a fatal alert already received gives for the stream's end, if one did.
    func receivedAlert() -> SesameError? {
        OpenSSLErrorStack.clear()
        var byte: UInt8 = 0
        let result = SSL_peek(ssl, &byte, 1)
        guard result <= 0, SSL_get_error(ssl, result) == SSL_ERROR_SSL else { return nil }
        let stack = OpenSSLErrorStack.drain()
        return stack.entries.isEmpty ? nil : error(for: SSL_ERROR_SSL, stack, during: "read")
    }
}
