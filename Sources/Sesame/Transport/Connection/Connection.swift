internal import COpenSSL
internal import CSesameShims
import Foundation
import Synchronization

/// A client connection on an ``EventLoop``: plain TCP, or TLS whose handshake suspends for
/// asynchronous decisions.
///
/// With TLS, when the server's chain arrives the handshake stops (`SSL_set_retry_verify`) until
/// ``TLSHandshakeHooks/serverTrust`` answers; when the server asks for a client certificate it stops
/// (`SSL_ERROR_WANT_X509_LOOKUP`) until ``TLSHandshakeHooks/clientCertificate`` answers. While it
/// waits, the socket is not polled (no CPU) and every other connection on the loop proceeds.
/// ``connect(host:port:tls:hooks:connectTimeout:inlineWaitLimit:on:)`` returns only after both decisions and the
/// handshake are complete, so no application byte is ever written before them. A resumed session
/// goes through the trust decision again on its stored chain.
///
/// TLS runs in a ``TLSEngine`` over byte buffers (the socket is read straight into its inbound
/// buffer, its output is written to the socket): OpenSSL never touches the socket, which makes
/// back-pressure explicit.
/// ``read(maxLength:timeout:)`` reads from the socket only while a read is waiting; ``write(_:)`` returns
/// when the bytes were handed to the kernel.
public final class Connection: @unchecked Sendable {
    // @unchecked: every `var` below is touched only on `loop`, that is by the thread holding the
    // loop's ownership (each entry point goes through `execute` or `runOnLoop`, and the callbacks
    // run inside SSL calls made there); `infoBox` is locked; the rest is immutable.
    let loop: EventLoop
    /// The loop's inline-wait bookkeeping, shared by its connections.
    let inlineWaits: InlineWaitPolicy
    /// The host the connection was made for.
    public let host: String
    /// The port.
    public let port: Int
    /// TLS settings; meaningful only when ``usesTLS``. The TLS fields change (on the loop) only
    /// when ``startTLS(serverName:port:tls:hooks:)`` turns a plain tunnel into TLS.
    var configuration: TLSConfiguration
    var usesTLS: Bool
    let connectTimeout: Duration
    var hooks: TLSHandshakeHooks
    var context: TLSContext?

    var phase: Phase = .idle
    /// The TLS session while the connection has one (its `SSL` is freed with it, once released).
    var tls: TLSEngine?
    /// Through an HTTPS proxy's tunnel, the proxy's session, which carries `tls` inside its data
    /// (see `Connection+Carrier.swift`); nil otherwise.
    var carrier: TLSEngine?
    /// The carrier's stream ended: the tunnel carries no more bytes.
    var carrierEnded = false
    var socket: Socket?
    var connector: TCPConnector?
    var remoteAddress: SocketAddress?
    var handshakeTimer: TimerHandle?
    /// Ends connecting (TCP and the TLS handshake, decisions included) at ``connectTimeout``.
    var establishTimer: TimerHandle?
    /// When the waiting read times out, and its timeout (for the message).
    var readDeadline: (at: ContinuousClock.Instant, timeout: Duration)?
    /// The timer watching read deadlines (see `watchRead`).
    var readWatchdog: (handle: TimerHandle, at: ContinuousClock.Instant)?
    var socketEOF = false
    /// Set when the socket failed; reported once OpenSSL has looked at what arrived before it.
    var socketError: SesameError?
    var registered = false
    /// What the socket is watched for (kept in step with the loop's registration).
    var watchedInterest: UInt32 = 0
    /// Who reads the socket, and so what the loop watches it for.
    var readState: ReadState = .inactive
    #if DEBUG
    /// For tests: runs on the caller's thread between `beginInlineWait` and its first ppoll(2).
    var inlineWaitWillStart: (@Sendable () -> Void)?
    #endif
    /// The peer shut down its sending side: no answer comes after what the kernel holds.
    var peerClosed = false
    /// The longest a caller's thread waits for bytes itself; zero: never.
    let inlineWaitLimit: Duration
    /// The peer's last answer came within `inlineWaitLimit` (or none was measured yet).
    var answersQuickly = true
    /// Reads left to serve through the loop after a wait on a caller's thread ran out, and how
    /// many the last such run-out imposed (doubled by each one after it, see `endInlineWait`).
    var inlineWaitBackoff = (skipsLeft: 0, length: 0)
    /// When the waiting read started waiting for bytes (to measure how quickly they came).
    var waitStartedAt: ContinuousClock.Instant?
    var failure: SesameError?
    var connectContinuation: CheckedContinuation<Void, any Error>?
    var pendingRead: (maxLength: Int, continuation: ReadContinuation)? {
        didSet {
            if oldValue == nil, pendingRead != nil { inlineWaits.readBegan() }
            if oldValue != nil, pendingRead == nil { inlineWaits.readEnded() }
        }
    }
    var pendingWrites: [CheckedContinuation<Void, any Error>] = []
    var outbound: [UInt8] = []
    var outboundOffset = 0
    /// Received bytes not yet read, for plain TCP (with TLS they wait inside OpenSSL).
    var inbound: [UInt8] = []
    var inboundOffset = 0
    private let infoBox = LockedValue<TLSConnectionInfo?>(nil)
    private let addressBox = LockedValue<String>("unknown")
    let closedWithoutNotifyBox = Atomic<Bool>(false)
    /// Set on the loop when the peer ended or reset the stream, or the connection failed or was
    /// closed; read by the pool before it hands out a kept-alive connection.
    let knownClosedBox = Atomic<Bool>(false)

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
        tls: TLSConfiguration?,
        hooks: TLSHandshakeHooks,
        context: TLSContext?,
        connectTimeout: Duration,
        inlineWaitLimit: Duration = .milliseconds(3),
        loop: EventLoop
    ) {
        self.host = host
        self.port = port
        self.configuration = tls ?? .makeClientConfiguration()
        self.usesTLS = tls != nil
        self.connectTimeout = connectTimeout
        self.inlineWaitLimit = inlineWaitLimit
        self.hooks = hooks
        self.context = context
        self.loop = loop
        self.inlineWaits = loop.local(InlineWaitPolicy.self) { InlineWaitPolicy() }
    }

    // MARK: - Public API

    /// Resolves `host`, connects, and (unless `tls` is nil) completes the TLS handshake including
    /// every decision.
    /// - Parameters:
    ///   - host: DNS name or IP literal (IPv6 with or without brackets). SNI is sent for names only.
    ///   - port: TCP port.
    ///   - tls: versions, ALPN, trust roots, handshake timeout; `nil` for plain TCP.
    ///   - hooks: the asynchronous decisions; default handling when a hook is `nil`.
    ///   - connectTimeout: time allowed for connecting as a whole: resolving the name, the TCP
    ///     connection (all resolved addresses together) and the TLS handshake with its decisions.
    ///   - inlineWaitLimit: how long a task's thread may wait for a read's bytes itself, instead of
    ///     suspending until the loop delivers them (a session passes its configuration's
    ///     `inlineWaitLimit`); `.zero`: never.
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
        inlineWaitLimit: Duration = .milliseconds(3),
        on loop: EventLoop = .shared
    ) async throws -> Connection {
        guard (1...65535).contains(port) else { throw SesameError(.invalidArgument, "port \(port) is out of range") }
        let started = ContinuousClock.now
        let addresses = try await Resolver.resolve(host: host, port: port, timeout: connectTimeout, on: loop)
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
            inlineWaitLimit: inlineWaitLimit,
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
        armEstablishTimer()
        let connector = TCPConnector(loop: loop, host: "\(host):\(port)", addresses: addresses) { [self] result in
            self.connector = nil
            switch result {
            case .failure(let error): fail(error)
            case .success(let (socket, address)): tcpConnected(socket, address)
            }
        }
        self.connector = connector
        connector.start(timeout: connectTimeout)
    }

    private func tcpConnected(_ socket: Socket, _ address: SocketAddress) {
        guard phase == .connecting else {
            socket.close()
            return
        }
        self.remoteAddress = address
        begin(on: socket, addressDescription: address.description)
    }

    /// Takes a connected socket: registers it, then (with TLS) starts the handshake.
    func begin(on socket: Socket, addressDescription: String) {
        self.socket = socket
        addressBox.withLock { $0 = addressDescription }
        do {
            if let context { try setUpTLS(context, serverName: host, port: port) }
            try loop.register(
                fd: socket.fd,
                interest: 0,
                shutDown: { [weak self] in
                    guard let self else { return }
                    fail(SesameError(.eventLoopShutDown, "\(host):\(port): the event loop shut down"))
                },
                handler: { [weak self] events in self?.socketEvent(events) }
            )
            registered = true
        } catch let error as SesameError {
            fail(error)
            return
        } catch {
            fail(SesameError(.tlsHandshakeFailed, "\(error)"))
            return
        }
        guard usesTLS else {
            phase = .established
            readState = .idle
            cancelEstablishTimer()
            connectContinuation?.resume()
            connectContinuation = nil
            return
        }
        phase = .handshaking
        readState = .handshaking
        armHandshakeTimer()
        driveHandshake()
        updateInterest()
    }

    /// Starts a TLS session for `serverName`:`port` over this connection's bytes.
    @discardableResult
    func setUpTLS(_ context: TLSContext, serverName: String, port: Int) throws(SesameError) -> TLSEngine {
        let engine = try TLSEngine(
            context: context,
            configuration: configuration,
            serverName: serverName,
            port: port,
            inboundCapacity: Connection.inboundCapacity
        )
        tls = engine
        return engine
    }

    func publish(_ info: TLSConnectionInfo) { infoBox.withLock { $0 = info } }
}
