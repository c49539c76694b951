internal import COpenSSL
internal import CSesameShims
import Foundation
import Synchronization

/// A TLS client connection on an ``EventLoop``, whose handshake suspends for asynchronous
/// decisions.
///
/// When the server's chain arrives the handshake stops (`SSL_set_retry_verify`) until
/// ``TLSHandshakeHooks/serverTrust`` answers; when the server asks for a client certificate it stops
/// (`SSL_ERROR_WANT_X509_LOOKUP`) until ``TLSHandshakeHooks/clientCertificate`` answers. While it
/// waits, the socket is not polled (no CPU) and every other connection on the loop proceeds.
/// ``connect(host:port:configuration:hooks:on:)`` returns only after both decisions and the
/// handshake are complete, so no application byte is ever written before them. A resumed session
/// goes through the trust decision again on its stored chain.
///
/// TLS runs over memory BIOs: OpenSSL never touches the socket, which makes back-pressure explicit.
/// ``read(maxLength:)`` reads from the socket only while a read is waiting; ``write(_:)`` returns
/// when the bytes were handed to the kernel.
public final class TLSConnection: @unchecked Sendable {
    // @unchecked: every `var` below is touched only on `loop` (each entry point hops there and the
    // callbacks run inside SSL calls made on the loop); `infoBox` is locked; the rest is immutable.
    let loop: EventLoop
    /// The host the connection was made for.
    public let host: String
    /// The port.
    public let port: Int
    let configuration: TLSConfiguration
    let hooks: TLSHandshakeHooks
    let context: TLSContext
    let sessionKey: String

    var phase: Phase = .idle
    var machine = TLSHandshakeStateMachine()
    var ssl: OpaquePointer?
    var readBIO: OpaquePointer?
    var writeBIO: OpaquePointer?
    var socket: Socket?
    var connector: TCPConnector?
    var remoteAddress: SocketAddress?
    var handshakeTimer: TimerHandle?
    var awaitingDecision = false
    var socketEOF = false
    /// Set when the socket failed; reported once OpenSSL has looked at what arrived before it.
    var socketError: SesameError?
    var registered = false
    var failure: SesameError?
    var lastEvaluation: TrustEvaluationResult?
    var connectContinuation: CheckedContinuation<Void, any Error>?
    var pendingRead: (maxLength: Int, continuation: CheckedContinuation<[UInt8], any Error>)?
    var pendingWrites: [CheckedContinuation<Void, any Error>] = []
    var outbound: [UInt8] = []
    var outboundOffset = 0
    private let infoBox = LockedValue<TLSConnectionInfo?>(nil)
    private let closedWithoutNotifyBox = Atomic<Bool>(false)

    enum Phase: Equatable {
        case idle
        case connecting
        case handshaking
        case established
        case closed
    }

    init(
        host: String,
        port: Int,
        configuration: TLSConfiguration,
        hooks: TLSHandshakeHooks,
        context: TLSContext,
        loop: EventLoop
    ) {
        self.host = host
        self.port = port
        self.configuration = configuration
        self.hooks = hooks
        self.context = context
        self.loop = loop
        self.sessionKey = "\(host.lowercased()):\(port)"
    }

    deinit {
        if let ssl { SSL_free(ssl) }
    }

    // MARK: - Public API

    /// Resolves `host`, connects, and completes the TLS handshake including every decision.
    /// - Parameters:
    ///   - host: DNS name or IP literal (IPv6 with or without brackets). SNI is sent for names only.
    ///   - port: TCP port.
    ///   - configuration: versions, ALPN, trust roots, timeouts.
    ///   - hooks: the asynchronous decisions; default handling when a hook is `nil`.
    ///   - loop: the event loop that will own the connection.
    /// - Throws: ``SesameError`` with code ``SesameError/Code/serverTrustRejected``,
    ///   ``SesameError/Code/clientCertificateRequired``, ``SesameError/Code/connectTimeout``, ...;
    ///   ``SesameError/Code/cancelled`` when the task is cancelled.
    public static func connect(
        host: String,
        port: Int,
        configuration: TLSConfiguration = .makeClientConfiguration(),
        hooks: TLSHandshakeHooks = .default,
        on loop: EventLoop = .shared
    ) async throws -> TLSConnection {
        guard (1...65535).contains(port) else { throw SesameError(.invalidArgument, "port \(port) is out of range") }
        let addresses = try await Resolver.resolve(host: host, port: port)
        let context = try TLSContext.shared(for: configuration)
        let connection = TLSConnection(
            host: host,
            port: port,
            configuration: configuration,
            hooks: hooks,
            context: context,
            loop: loop
        )
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
        return connection
    }

    /// What the handshake agreed on.
    public var info: TLSConnectionInfo {
        // safe: set before `connect` returns, and `connect` is the only way to get a connection.
        infoBox.withLock { $0! }
    }

    /// True when the peer ended the stream without a TLS close_notify (a possible truncation).
    public var closedWithoutNotify: Bool { closedWithoutNotifyBox.load(ordering: .relaxed) }

    /// Reads up to `maxLength` decrypted bytes; an empty result is the end of the stream.
    /// - Throws: ``SesameError`` (``SesameError/Code/clientCertificateRequired`` and
    ///   ``SesameError/Code/clientCertificateRejected`` for TLS 1.3 alerts that arrive after the
    ///   handshake, ``SesameError/Code/cancelled`` when the task is cancelled, which closes the
    ///   connection).
    public func read(maxLength: Int = 16_384) async throws -> [UInt8] {
        guard maxLength > 0 else { throw SesameError(.invalidArgument, "maxLength must be positive") }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<[UInt8], any Error>) in
                let posted = loop.execute { self.startRead(maxLength: maxLength, continuation: continuation) }
                if !posted {
                    continuation.resume(throwing: SesameError(.eventLoopShutDown, "the event loop has shut down"))
                }
            }
        } onCancel: {
            loop.execute { self.fail(SesameError(.cancelled, "a read from \(self.host):\(self.port) was cancelled")) }
        }
    }

    /// Encrypts and sends `bytes`; returns when all of them were handed to the kernel.
    public func write(_ bytes: [UInt8]) async throws {
        guard !bytes.isEmpty else { return }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let posted = loop.execute { self.startWrite(bytes, continuation: continuation) }
                if !posted {
                    continuation.resume(throwing: SesameError(.eventLoopShutDown, "the event loop has shut down"))
                }
            }
        } onCancel: {
            loop.execute { self.fail(SesameError(.cancelled, "a write to \(self.host):\(self.port) was cancelled")) }
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

    // MARK: - Loop-confined

    func start(addresses: [SocketAddress], continuation: CheckedContinuation<Void, any Error>) {
        assert(loop.inEventLoop)
        if let failure {
            continuation.resume(throwing: failure)
            return
        }
        connectContinuation = continuation
        phase = .connecting
        let connector = TCPConnector(loop: loop, host: "\(host):\(port)", addresses: addresses) { [self] result in
            self.connector = nil
            switch result {
            case .failure(let error): fail(error)
            case .success(let (socket, address)): tcpConnected(socket, address)
            }
        }
        self.connector = connector
        connector.start(timeout: configuration.connectTimeout)
    }

    private func tcpConnected(_ socket: Socket, _ address: SocketAddress) {
        guard phase == .connecting else {
            socket.close()
            return
        }
        self.socket = socket
        self.remoteAddress = address
        do {
            try setUpSSL()
            try loop.register(fd: socket.fd, interest: 0) { [weak self] events in self?.socketEvent(events) }
            registered = true
        } catch let error as SesameError {
            fail(error)
            return
        } catch {
            fail(SesameError(.tlsHandshakeFailed, "\(error)"))
            return
        }
        phase = .handshaking
        armHandshakeTimer()
        driveHandshake()
        updateInterest()
    }

    private func setUpSSL() throws {
        OpenSSLErrorStack.clear()
        guard let ssl = SSL_new(context.pointer), let readBIO = BIO_new(BIO_s_mem()),
            let writeBIO = BIO_new(BIO_s_mem())
        else { throw SesameError(.tlsHandshakeFailed, "cannot create the TLS session (\(OpenSSLErrorStack.drain()))") }
        self.ssl = ssl
        SSL_set_bio(ssl, readBIO, writeBIO)  // the SSL owns both BIOs from here on
        self.readBIO = readBIO
        self.writeBIO = writeBIO
        SSL_set_ex_data(ssl, TLSCallbacks.connectionIndex, Unmanaged.passUnretained(self).toOpaque())
        SSL_set_connect_state(ssl)
        var bareHost = host
        if bareHost.hasPrefix("["), bareHost.hasSuffix("]") { bareHost = String(bareHost.dropFirst().dropLast()) }
        if IPAddressText.parse(bareHost) == nil {
            if bareHost.hasSuffix(".") { bareHost.removeLast() }
            guard CSesameShims_SSL_set_tlsext_host_name(ssl, bareHost) == 1 else {
                throw SesameError(.invalidArgument, "'\(host)' cannot be sent as a TLS server name")
            }
        }
        if configuration.sessionResumption, let session = context.sessions.session(for: sessionKey) {
            SSL_set_session(ssl, session.pointer)
        }
    }

    // MARK: Events

    private func socketEvent(_ events: UInt32) {
        guard phase != .closed else { return }
        if events & EpollEvents.writable != 0 { flushOutbound() }
        if events & (EpollEvents.readable | EpollEvents.error | EpollEvents.hangUp) != 0 { readFromSocket() }
        progress()
    }

    private func readFromSocket() {
        guard let socket, let readBIO, !socketEOF else { return }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let result = buffer.withUnsafeMutableBytes { socket.read(into: $0) }
        switch result {
        case .done(let count):
            _ = buffer.withUnsafeBytes { BIO_write(readBIO, $0.baseAddress, Int32(count)) }
        case .wouldBlock:
            break
        case .endOfFile:
            socketEOF = true
        case .failed(let code):
            // Not failed yet: what arrived before the reset (often an alert) explains it better.
            socketEOF = true
            socketError = SesameError(
                code == ECONNRESET ? .connectionReset : .ioError,
                "\(host):\(port): \(errnoText(code))"
            )
        }
    }

    /// Fails with the reason the peer gave (an alert it sent before closing), else with `fallback`.
    func failExplained(_ fallback: SesameError) {
        guard phase != .closed else { return }
        while !socketEOF, phase != .closed {
            let before = BIO_ctrl_pending(readBIO)
            readFromSocket()
            if BIO_ctrl_pending(readBIO) == before { break }
        }
        socketEOF = true
        if socketError == nil { socketError = fallback }
        if phase == .handshaking {
            driveHandshake()  // fails with the alert's reason, or with `socketError`
            return
        }
        if let ssl, phase == .established {
            OpenSSLErrorStack.clear()
            var byte: UInt8 = 0
            let result = SSL_peek(ssl, &byte, 1)
            if result <= 0, SSL_get_error(ssl, result) == SSL_ERROR_SSL {
                let stack = OpenSSLErrorStack.drain()
                if !stack.entries.isEmpty {
                    fail(mapTLSError(SSL_ERROR_SSL, stack, during: "read"))
                    return
                }
            }
        }
        fail(fallback)
    }

    /// Moves the state forward after bytes arrived or a decision came back.
    func progress() {
        switch phase {
        case .handshaking:
            if awaitingDecision {
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
        guard let socket, registered, phase != .closed else { return }
        var interest: UInt32 = 0
        if outboundOffset < outbound.count { interest |= EpollEvents.writable }
        let wantsBytes =
            (phase == .handshaking && !awaitingDecision) || (phase == .established && pendingRead != nil)
        if wantsBytes && !socketEOF { interest |= EpollEvents.readable }
        if socketEOF && interest == 0 {
            // A closed peer keeps the socket readable (and may report HUP): stop watching it.
            loop.deregister(fd: socket.fd)
            registered = false
            return
        }
        loop.setInterest(fd: socket.fd, interest)
    }

    // MARK: Output

    /// Moves ciphertext from OpenSSL to the kernel; completes writes once everything left.
    func flushOutbound() {
        guard let writeBIO, let socket else { return }
        let pending = Int(BIO_ctrl_pending(writeBIO))
        if pending > 0 {
            if outboundOffset == outbound.count {
                outbound.removeAll(keepingCapacity: true)
                outboundOffset = 0
            }
            let start = outbound.count
            outbound.append(contentsOf: repeatElement(0, count: pending))
            // safe: the buffer holds at least `pending` > 0 bytes, so baseAddress is not nil.
            let read = outbound.withUnsafeMutableBytes { BIO_read(writeBIO, $0.baseAddress! + start, Int32(pending)) }
            if read < pending { outbound.removeLast(pending - max(0, Int(read))) }
        }
        while outboundOffset < outbound.count {
            let result = outbound.withUnsafeBytes { raw in
                socket.write(UnsafeRawBufferPointer(rebasing: raw[outboundOffset...]))
            }
            switch result {
            case .done(let count): outboundOffset += count
            case .wouldBlock: return
            case .endOfFile: return
            case .failed(let code):
                outbound.removeAll()
                outboundOffset = 0
                failExplained(
                    SesameError(
                        code == EPIPE || code == ECONNRESET ? .connectionReset : .ioError,
                        "\(host):\(port): \(errnoText(code))"
                    )
                )
                return
            }
        }
        outbound.removeAll(keepingCapacity: true)
        outboundOffset = 0
        let waiting = pendingWrites
        pendingWrites.removeAll()
        for continuation in waiting { continuation.resume() }
    }

    private func startWrite(_ bytes: [UInt8], continuation: CheckedContinuation<Void, any Error>) {
        guard phase == .established, let ssl else {
            continuation.resume(
                throwing: failure ?? SesameError(.connectionClosed, "\(host):\(port): the connection is closed")
            )
            return
        }
        var offset = 0
        OpenSSLErrorStack.clear()
        while offset < bytes.count {
            let chunk = min(bytes.count - offset, Int(Int32.max))
            // safe: `bytes` is not empty, so baseAddress is not nil.
            let written = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress! + offset, Int32(chunk)) }
            guard written > 0 else {
                let error = mapTLSError(SSL_get_error(ssl, written), OpenSSLErrorStack.drain(), during: "write")
                continuation.resume(throwing: error)
                fail(error)
                return
            }
            offset += Int(written)
        }
        pendingWrites.append(continuation)
        flushOutbound()
        updateInterest()
    }

    // MARK: Input

    private func startRead(maxLength: Int, continuation: CheckedContinuation<[UInt8], any Error>) {
        guard phase == .established, pendingRead == nil else {
            let error =
                phase == .established
                ? SesameError(.invalidArgument, "only one read at a time")
                : failure ?? SesameError(.connectionClosed, "\(host):\(port): the connection is closed")
            continuation.resume(throwing: error)
            return
        }
        pendingRead = (maxLength, continuation)
        serveRead()
        updateInterest()
    }

    private func serveRead() {
        guard let (maxLength, continuation) = pendingRead, let ssl else { return }
        var buffer = [UInt8](repeating: 0, count: maxLength)
        OpenSSLErrorStack.clear()
        let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32(maxLength)) }
        flushOutbound()  // reading can produce output (alerts, key updates)
        if count > 0 {
            pendingRead = nil
            buffer.removeLast(maxLength - Int(count))
            continuation.resume(returning: buffer)
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

    private func endOfStream(closeNotify: Bool) {
        guard let (_, continuation) = pendingRead else { return }
        pendingRead = nil
        if !closeNotify { closedWithoutNotifyBox.store(true, ordering: .relaxed) }
        continuation.resume(returning: [])
    }

    // MARK: Teardown

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

    func publish(_ info: TLSConnectionInfo) { infoBox.withLock { $0 = info } }

    /// Fails every waiting operation with `error` and releases the socket and the TLS session.
    func fail(_ error: SesameError) {
        assert(loop.inEventLoop)
        guard phase != .closed else { return }
        failure = error
        phase = .closed
        cancelHandshakeTimer()
        connector?.cancel(error)
        connector = nil
        if let continuation = connectContinuation {
            connectContinuation = nil
            continuation.resume(throwing: error)
        }
        if let (_, continuation) = pendingRead {
            pendingRead = nil
            continuation.resume(throwing: error)
        }
        let writes = pendingWrites
        pendingWrites.removeAll()
        for continuation in writes { continuation.resume(throwing: error) }
        tearDown()
    }

    private func closeNow() {
        guard phase != .closed else { return }
        if phase == .established, let ssl {
            OpenSSLErrorStack.clear()
            _ = SSL_shutdown(ssl)  // queues close_notify
            _ = OpenSSLErrorStack.drain()
            flushOutbound()
        }
        fail(SesameError(.connectionClosed, "\(host):\(port): the connection was closed"))
    }

    private func tearDown() {
        if let socket {
            if registered { loop.deregister(fd: socket.fd) }
            registered = false
            socket.close()
        }
        socket = nil
        if let ssl {
            SSL_set_ex_data(ssl, TLSCallbacks.connectionIndex, nil)
            SSL_free(ssl)
        }
        ssl = nil
        readBIO = nil
        writeBIO = nil
        outbound = []
        outboundOffset = 0
    }
}
