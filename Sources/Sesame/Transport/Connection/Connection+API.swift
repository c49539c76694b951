import FoundationEssentials
import Glibc

// What callers use: connecting, reading, writing and closing. Each entry point runs on the loop:
// at once when the caller already runs there (a task preferring the loop as its executor), else
// after a hop, the caller suspended meanwhile.
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
        let started = loop.now
        let addresses = try await Resolver.resolve(
            host: host,
            port: port,
            timeout: connectTimeout,
            cacheLifetime: nameCacheLifetime,
            on: loop
        )
        let planned = try tls.map { ($0, try TLSContext.shared(for: $0)) }
        let left = connectTimeout - started.duration(to: loop.now)
        guard left > .zero else {
            throw SesameError(.connectTimeout, "\(host):\(port): not connected within \(connectTimeout)")
        }
        let connection = Connection(
            host: host,
            port: port,
            tls: planned,
            hooks: hooks,
            connectTimeout: left,
            loop: loop
        )
        do {
            try await connection.onLoop(cancelled: "connecting to \(host):\(port) was cancelled") { continuation in
                // Attached first: what the server sends right after the handshake (a TLS 1.3
                // alert, a session ticket) is read as soon as it comes.
                connection.attach(RawStream(connection))
                connection.start(addresses: addresses, continuation: continuation)
            }
        } catch let error as SesameError where error.code == .connectFailed || error.code == .connectTimeout {
            // No address took the connection in time: the name may have moved; the next one asks again.
            if nameCacheLifetime != nil { NameCache.shared.forget(host: IPAddressText.unbracketed(host), port: port) }
            throw error
        }
        return connection
    }

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
        return try await reading(cancelled: "a read from \(host):\(port) was cancelled") { stream, continuation in
            stream.read(maxLength: maxLength, timeout: timeout, continuation: continuation)
        } ?? []
    }

    /// Reads like ``read(maxLength:timeout:)``, but when nothing arrives within `wait` returns
    /// nil and the connection goes on (a server that may or may not answer `Expect: 100-continue`).
    func read(maxLength: Int, waitingAtMost wait: Duration) async throws -> [UInt8]? {
        try await reading(cancelled: "a read from \(host):\(port) was cancelled") { stream, continuation in
            stream.read(maxLength: maxLength, timeout: wait, quiet: true, continuation: continuation)
        }
    }

    /// Sends `bytes`, then reads like ``read(maxLength:timeout:)``: a request and the first bytes
    /// of its answer in one trip to the loop.
    public func writeThenRead(
        _ bytes: [UInt8],
        maxLength: Int = 65_536,
        timeout: Duration? = nil
    ) async throws
        -> [UInt8]
    {
        guard maxLength > 0 else { throw SesameError(.invalidArgument, "maxLength must be positive") }
        return try await reading(cancelled: "an exchange with \(host):\(port) was cancelled") { stream, continuation in
            do {
                try self.send(bytes)
            } catch {
                return continuation.resume(throwing: error)
            }
            stream.read(maxLength: maxLength, timeout: timeout, continuation: continuation)
        } ?? []
    }

    /// Encrypts and sends `bytes`; returns when all of them were handed to the kernel.
    public func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        try await onLoop(cancelled: "a write to \(host):\(port) was cancelled") { continuation in
            self.startWrite(bytes, continuation)
        }
    }

    /// Sends close_notify (best effort) and closes the socket. Pending reads and writes fail with
    /// ``SesameError/Code/connectionClosed``.
    public func close() async {
        _ = try? await loop.onLoop { self.closeNow() }
    }

    /// Starts TLS on this established connection: the bytes after a proxy's `CONNECT` response.
    /// The handshake is for `serverName`:`port` (SNI, trust decision, session cache), with every
    /// decision and check of ``connect(host:port:tls:hooks:connectTimeout:nameCacheLifetime:on:)``;
    /// it returns when the tunnel carries TLS to that server. On a connection that already uses
    /// TLS (to an HTTPS proxy), the new session runs inside the first one's data: TLS inside TLS,
    /// and ``tlsInfo`` then describes the inner session. `alreadyReceived` are bytes read past the
    /// proxy's response head (they belong to the new TLS stream).
    /// - Throws: ``SesameError`` as `connect` does; ``SesameError/Code/invalidArgument`` when the
    ///   connection is not established, has a read waiting, or already carries a tunnel.
    public func startTLS(
        serverName: String,
        port: Int,
        tls: TLSConfiguration,
        hooks: TLSHandshakeHooks = .default,
        alreadyReceived: [UInt8] = []
    ) async throws {
        let context = try TLSContext.shared(for: tls)
        try await onLoop(cancelled: "the TLS handshake with \(serverName):\(port) was cancelled") { continuation in
            let stream = self.handler as? RawStream
            guard stream?.isReading != true else {
                return continuation.resume(
                    throwing: SesameError(.invalidArgument, "TLS cannot start while a read waits")
                )
            }
            let received = alreadyReceived + (stream?.takeBuffered() ?? [])
            if stream != nil { self.detachHandler() }
            self.beginTLS(
                serverName: serverName,
                port: port,
                configuration: tls,
                context: context,
                hooks: hooks,
                received: received,
                continuation: continuation
            )
        }
        try await loop.onLoop { self.attach(RawStream(self)) }
    }

    /// True while a read of the public API waits (on the loop).
    var isReading: Bool {
        assert(loop.inEventLoop)
        return (handler as? RawStream)?.isReading ?? false
    }
}

extension Connection {
    private func startWrite(_ bytes: [UInt8], _ continuation: CheckedContinuation<Void, any Error>) {
        do {
            try send(bytes)
        } catch {
            return continuation.resume(throwing: error)
        }
        guard let stream = handler as? RawStream else { return continuation.resume() }
        stream.awaitFlush(continuation)
    }

    /// Starts a read of the public API's stream through `start` on the loop and suspends until it
    /// is answered; the task's cancellation fails the connection.
    private func reading(
        cancelled: String,
        _ start: @escaping (RawStream, CheckedContinuation<[UInt8]?, any Error>) -> Void
    ) async throws -> [UInt8]? {
        try await withTaskCancellationHandler {
            try await withStream(start)
        } onCancel: {
            loop.execute { self.fail(SesameError(.cancelled, cancelled)) }
        }
    }

    /// Runs `body` on the loop with the public API's stream; fails when the connection carries
    /// another protocol (or none, being closed).
    private func withStream<Value>(
        _ body: @escaping (RawStream, CheckedContinuation<Value, any Error>) -> Void
    ) async throws -> Value {
        let start = LoopBound1 { (continuation: CheckedContinuation<Value, any Error>) in
            guard let stream = self.handler as? RawStream else {
                guard self.machine.phase != .closed else { return continuation.resume(throwing: self.closedError) }
                return continuation.resume(
                    throwing: SesameError(.invalidArgument, "\(self.host):\(self.port) carries another protocol")
                )
            }
            body(stream, continuation)
        }
        return try await withCheckedThrowingContinuation { continuation in
            if loop.inEventLoop { return start.body(continuation) }
            if !loop.execute({ start.body(continuation) }) {
                continuation.resume(throwing: SesameError(.eventLoopShutDown, "the event loop has shut down"))
            }
        }
    }

    /// Runs `body` on the loop and suspends until it resumes the continuation; the task's
    /// cancellation fails the connection with `cancelled`.
    private func onLoop(
        cancelled: String,
        _ body: @escaping (CheckedContinuation<Void, any Error>) -> Void
    ) async throws {
        let start = LoopBound1(body)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                if loop.inEventLoop { return start.body(continuation) }
                if !loop.execute({ start.body(continuation) }) {
                    continuation.resume(throwing: SesameError(.eventLoopShutDown, "the event loop has shut down"))
                }
            }
        } onCancel: {
            loop.execute { self.fail(SesameError(.cancelled, cancelled)) }
        }
    }
}

/// A one-argument closure made for the loop, carried to it from another thread: it is only ever
/// called on the loop (the caller's promise), so what it captures is never touched elsewhere.
struct LoopBound1<Argument>: @unchecked Sendable {
    // @unchecked: see the type's comment.
    let body: (Argument) -> Void
    init(_ body: @escaping (Argument) -> Void) { self.body = body }
}
