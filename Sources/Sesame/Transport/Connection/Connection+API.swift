import FoundationEssentials
import Glibc

// What callers use: connecting, reading, writing and closing. Each entry point hops to the loop.
extension Connection {
    /// Resolves `host`, connects, and (unless `tls` is nil) completes the TLS handshake including
    /// every decision.
    /// - Parameters:
    ///   - host: DNS name or IP literal (IPv6 with or without brackets). SNI is sent for names only.
    ///   - port: TCP port.
    ///   - tls: versions, ALPN, trust roots, handshake timeout; `nil` for plain TCP.
    ///   - hooks: the asynchronous decisions; default handling when a hook is `nil`.
    ///   - connectTimeout: time allowed for connecting as a whole: resolving the name, the TCP
    ///     connection (all resolved addresses together) and the TLS handshake with its decisions.
    ///   - nameCacheLifetime: how old the process's cached answer for `host` may be (a session
    ///     passes its configuration's `nameCacheLifetime`); concurrent
    ///     connections to one host then share one lookup, and a connection that reaches none of
    ///     the addresses drops the answer. `nil`: a lookup of its own.
    ///   - loop: the event loop that will own the connection.
    /// - Throws: ``SesameError`` with code ``SesameError/Code/serverTrustRejected``,
    ///   ``SesameError/Code/clientCertificateRequired``, ``SesameError/Code/connectTimeout``, ...;
    ///   ``SesameError/Code/cancelled`` when the task is cancelled.
    public static func connect(
        host: String,
        port: Int,
        tls: TLSConfiguration? = .makeClientConfiguration(),
        hooks: TLSHandshakeHooks = .default,
        connectTimeout: Duration = .seconds(30),
        nameCacheLifetime: Duration? = nil,
        on loop: EventLoop = .shared
    ) async throws -> Connection {
        guard (1...65535).contains(port) else { throw SesameError(.invalidArgument, "port \(port) is out of range") }
        let started = ContinuousClock.now
        let addresses = try await Resolver.resolve(
            host: host,
            port: port,
            timeout: connectTimeout,
            cacheLifetime: nameCacheLifetime,
            on: loop
        )
        let context = try tls.map { try TLSContext.shared(for: $0) }
        let left = connectTimeout - started.duration(to: .now)
        guard left > .zero else {
            throw SesameError(.connectTimeout, "\(host):\(port): not connected within \(connectTimeout)")
        }
        let connection = Connection(
            host: host,
            port: port,
            tls: tls,
            hooks: hooks,
            context: context,
            connectTimeout: left,
            loop: loop
        )
        do {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                    let posted = loop.execute { connection.start(addresses: addresses, continuation: continuation) }
                    if !posted {
                        continuation.resume(throwing: SesameError(.eventLoopShutDown, "the event loop has shut down"))
                    }
                }
            } onCancel: {
                loop.execute { connection.fail(SesameError(.cancelled, "connecting to \(host):\(port) was cancelled")) }
            }
        } catch let error as SesameError where error.code == .connectFailed || error.code == .connectTimeout {
            // No address took the connection in time: the name may have moved; the next one asks again.
            if nameCacheLifetime != nil { NameCache.shared.forget(host: IPAddressText.unbracketed(host), port: port) }
            throw error
        }
        return connection
    }

    /// What the TLS handshake agreed on; `nil` for plain TCP.
    public var tlsInfo: TLSConnectionInfo? { infoBox.withLock { $0 } }

    /// The peer's address, e.g. "127.0.0.1:443" or "[::1]:443".
    public var remoteAddressDescription: String { addressBox.withLock { $0 } }

    /// True when the peer ended the stream without a TLS close_notify (a possible truncation).
    public var closedWithoutNotify: Bool { closedWithoutNotifyBox.load(ordering: .relaxed) }

    /// True once the connection is known to be closed: the peer ended or reset it, or it failed
    /// or was closed here. A connection idle between requests notices the peer's FIN.
    var isKnownClosed: Bool { knownClosedBox.load(ordering: .acquiring) }

    /// Reads up to `maxLength` decrypted bytes; an empty result is the end of the stream.
    ///
    /// When no byte arrives within `timeout`, the read fails with ``SesameError/Code/timeout`` and
    /// the connection is closed.
    /// - Throws: ``SesameError`` (``SesameError/Code/clientCertificateRequired`` and
    ///   ``SesameError/Code/clientCertificateRejected`` for TLS 1.3 alerts that arrive after the
    ///   handshake, ``SesameError/Code/cancelled`` when the task is cancelled, which closes the
    ///   connection).
    public func read(maxLength: Int = 16_384, timeout: Duration? = nil) async throws -> [UInt8] {
        guard maxLength > 0 else { throw SesameError(.invalidArgument, "maxLength must be positive") }
        return try await withTaskCancellationHandler {
            try await reading { continuation in
                self.startRead(maxLength: maxLength, timeout: timeout, drainingSocket: true, continuation: continuation)
            }
        } onCancel: {
            loop.execute { self.fail(SesameError(.cancelled, "a read from \(self.host):\(self.port) was cancelled")) }
        }
    }

    /// Reads like ``read(maxLength:timeout:)``, but when nothing arrives within `wait` returns
    /// nil and the connection goes on (a server that may or may not answer `Expect: 100-continue`).
    func read(maxLength: Int, waitingAtMost wait: Duration) async throws -> [UInt8]? {
        do {
            return try await withTaskCancellationHandler {
                try await reading { continuation in
                    self.startRead(
                        maxLength: maxLength,
                        timeout: wait,
                        drainingSocket: true,
                        endsQuietly: true,
                        continuation: continuation
                    )
                }
            } onCancel: {
                loop.execute {
                    self.fail(SesameError(.cancelled, "a read from \(self.host):\(self.port) was cancelled"))
                }
            }
        } catch is ReadWaitEnded {
            return nil
        }
    }

    /// Reads like ``read(maxLength:waitingAtMost:)``, for a task that reads on behalf of others
    /// too (an HTTP/2 stream's task reading the connection for every stream): the task's
    /// cancellation ends only its wait (nil), not the connection.
    ///
    /// `bytes`, when there are any, are sent first, in the same trip through the event loop (as
    /// ``writeThenRead(_:maxLength:timeout:)`` does), and `sent` then runs on the loop: the read
    /// waits before an answer can come, so a caller's thread may wait for it (an answer that came
    /// first would wake the loop). Their write is not undone by the cancellation.
    ///
    /// `withdrawal` lets its owner end the wait (nil, as a deadline would) from another task, at
    /// any time: before the read began, while it waits, or after it ended (then it does nothing).
    func readShared(
        maxLength: Int,
        waitingAtMost wait: Duration,
        sending bytes: [UInt8] = [],
        sent: (@Sendable () -> Void)? = nil,
        withdrawal: ReadWithdrawal = ReadWithdrawal()
    ) async throws -> [UInt8]? {
        do {
            return try await withTaskCancellationHandler {
                try await reading { continuation in
                    if bytes.isEmpty {
                        self.startRead(
                            maxLength: maxLength,
                            timeout: wait,
                            drainingSocket: true,
                            endsQuietly: true,
                            continuation: continuation
                        )
                    } else {
                        self.startWriteThenRead(
                            bytes,
                            maxLength: maxLength,
                            timeout: wait,
                            endsQuietly: true,
                            continuation: continuation
                        )
                    }
                    sent?()
                    // Withdrawn before the read began: the withdrawal found nothing to end then.
                    if withdrawal.isWithdrawn { self.withdrawQuietRead() }
                }
            } onCancel: {
                withdrawal.withdraw(from: self)
            }
        } catch is ReadWaitEnded {
            return nil
        }
    }

    /// Sends `bytes`, then reads like ``read(maxLength:timeout:)``: a request and the first bytes
    /// of its answer in one trip through the event loop.
    public func writeThenRead(
        _ bytes: [UInt8],
        maxLength: Int = 65_536,
        timeout: Duration? = nil
    ) async throws
        -> [UInt8]
    {
        guard maxLength > 0 else { throw SesameError(.invalidArgument, "maxLength must be positive") }
        return try await withTaskCancellationHandler {
            try await reading { continuation in
                self.startWriteThenRead(bytes, maxLength: maxLength, timeout: timeout, continuation: continuation)
            }
        } onCancel: {
            loop.execute {
                self.fail(SesameError(.cancelled, "an exchange with \(self.host):\(self.port) was cancelled"))
            }
        }
    }

    /// Encrypts and sends `bytes`; returns when all of them were handed to the kernel.
    public func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let posted = loop.runOnLoop { self.startWrite(bytes, continuation: continuation) }
                if !posted {
                    continuation.resume(throwing: SesameError(.eventLoopShutDown, "the event loop has shut down"))
                }
            }
        } onCancel: {
            loop.execute { self.fail(SesameError(.cancelled, "a write to \(self.host):\(self.port) was cancelled")) }
        }
    }

    /// ``write(_:)`` for bytes several tasks share (HTTP/2 frames): the calling task's
    /// cancellation does not fail the connection; the write ends when the bytes left or the
    /// connection failed.
    func writeShared(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let posted = loop.runOnLoop { self.startWrite(bytes, continuation: continuation) }
            if !posted {
                continuation.resume(throwing: SesameError(.eventLoopShutDown, "the event loop has shut down"))
            }
        }
    }

    /// Sends close_notify (best effort) and closes the socket. Pending reads and writes fail with
    /// ``SesameError/Code/connectionClosed``.
    public func close() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let posted = loop.execute {
                self.closeNow()
                continuation.resume()
            }
            if !posted { continuation.resume() }
        }
    }
}

extension Connection {
    /// Starts a read through `start` on the loop (on this thread when the loop is free, so a read
    /// that buffered bytes answer needs no thread hop) and suspends until it is answered. Only the
    /// loop's thread waits for the socket: the task's thread is never held.
    func reading(_ start: @escaping @Sendable (ReadContinuation) -> Void) async throws -> [UInt8] {
        try await withReadContinuation(handoff: readHandoff) { (continuation: ReadContinuation) in
            if !loop.runOnLoop({ start(continuation) }) {
                continuation.resume(throwing: SesameError(.eventLoopShutDown, "the event loop has shut down"))
            }
        }
    }
}
