import FoundationEssentials
import Glibc
import Synchronization

/// A client connection on an ``EventLoop``: plain TCP, or TLS whose handshake suspends for
/// asynchronous decisions.
///
/// With TLS, when the server's chain arrives the handshake stops (`SSL_set_retry_verify`) until
/// ``TLSHandshakeHooks/serverTrust`` answers; when the server asks for a client certificate it stops
/// (`SSL_ERROR_WANT_X509_LOOKUP`) until ``TLSHandshakeHooks/clientCertificate`` answers. While it
/// waits, the socket is not watched (no CPU) and every other connection on the loop proceeds.
/// ``connect(host:port:tls:hooks:connectTimeout:nameCacheLifetime:on:)`` returns only after both
/// decisions and the handshake are complete, so no application byte is ever written before them.
/// A resumed session goes through the trust decision again on its stored chain.
///
/// A connection belongs to its loop: its state (a `ConnectionStateMachine`), its socket, its
/// TLS engines and the protocol it carries are touched on the loop's thread only, without a lock.
/// Other threads reach it through the public methods, which hop to the loop and suspend until it
/// answers; what arrives is pushed to the protocol above while it takes more.
public final class Connection: @unchecked Sendable {
    // @unchecked: every `var` is touched only on `loop` (asserted); `facts` is locked; the rest
    // is immutable.
    let loop: EventLoop
    /// The host the connection was made for.
    public let host: String
    /// The port.
    public let port: Int
    let connectTimeout: Duration
    private(set) var machine: ConnectionStateMachine
    private var channel: SocketChannel?
    /// The TLS the bytes go through, once a handshake started; nil for plain TCP.
    private(set) var tls: TLSStack?
    /// What TLS to start once TCP connects (nil for plain TCP), and who decides its questions.
    private var plannedTLS: (configuration: TLSConfiguration, context: TLSContext)?
    private var hooks: TLSHandshakeHooks
    /// The protocol above, once attached.
    private(set) var handler: (any ConnectionHandler)?
    private var connector: TCPConnector?
    /// The one timer for the machine's deadlines, and when it fires.
    private var timer: (handle: TimerHandle, at: ContinuousClock.Instant)?
    /// Who waits for connecting (or a tunnel's TLS) to finish.
    private var waitingToConnect: CheckedContinuation<Void, any Error>?
    /// The socket's stream ended (a plain connection's input ends with it; a tunnel's inner TLS
    /// may end first).
    private var socketEnded = false
    /// The last socket read came short: the kernel holds nothing more until epoll says so.
    private var socketDrained = false
    /// Why the socket failed; reported once OpenSSL has looked at what arrived before it.
    private var socketError: SesameError?
    /// Why the connection closed: what every later call fails with.
    private(set) var failure: SesameError?
    /// What other threads may read: set on the loop when it changes.
    private let facts = LockedValue(Facts())

    struct Facts {
        var tlsInfo: TLSConnectionInfo?
        var remoteAddress = "unknown"
        var closedWithoutNotify = false
        /// The input ended, or the connection failed or was closed.
        var closed = false
    }

    init(
        host: String,
        port: Int,
        tls: (configuration: TLSConfiguration, context: TLSContext)?,
        hooks: TLSHandshakeHooks,
        connectTimeout: Duration,
        loop: EventLoop
    ) {
        self.host = host
        self.port = port
        self.plannedTLS = tls
        self.hooks = hooks
        self.connectTimeout = connectTimeout
        self.loop = loop
        machine = ConnectionStateMachine(
            peer: "\(host):\(port)",
            handshakeTimeout: tls?.configuration.handshakeTimeout ?? .seconds(10)
        )
    }

    // MARK: What other threads may read

    /// What the TLS handshake agreed on; `nil` for plain TCP.
    public var tlsInfo: TLSConnectionInfo? { facts.withLock { $0.tlsInfo } }

    /// The peer's address, e.g. "127.0.0.1:443" or "[::1]:443".
    public var remoteAddressDescription: String { facts.withLock { $0.remoteAddress } }

    /// True when the peer ended the stream without a TLS close_notify (a possible truncation).
    public var closedWithoutNotify: Bool { facts.withLock { $0.closedWithoutNotify } }

    /// True once the connection is known to be closed: its input ended, or it failed or was
    /// closed here. An idle connection watches its socket, so it notices the peer closing.
    var isKnownClosed: Bool { facts.withLock { $0.closed } }

    // MARK: Connecting

    /// Starts connecting to `addresses`; `continuation` resumes once connected (TLS included).
    func start(addresses: [SocketAddress], continuation: CheckedContinuation<Void, any Error>) {
        assert(loop.inEventLoop)
        waitingToConnect = continuation
        perform(machine.start(connectTimeout: connectTimeout, now: loop.now)) { [self] in
            let connector = TCPConnector(loop: loop, host: machine.peer, addresses: addresses) { [self] result in
                self.connector = nil
                switch result {
                case .failure(let error): fail(error)
                case .success(let (socket, address)): tcpConnected(socket, address)
                }
            }
            self.connector = connector
            connector.start(timeout: connectTimeout)
        }
    }

    private func tcpConnected(_ socket: Socket, _ address: SocketAddress) {
        guard machine.phase == .connecting else {
            socket.close()
            return
        }
        let channel = SocketChannel(socket: socket, loop: loop)
        self.channel = channel
        facts.withLock { $0.remoteAddress = address.description }
        do {
            if let (configuration, context) = plannedTLS {
                tls = TLSStack(try makeEngine(configuration, context, serverName: host, port: port))
            }
            try channel.register(
                shutDown: { [weak self] in
                    guard let self else { return }
                    fail(SesameError(.eventLoopShutDown, "\(machine.peer): the event loop shut down"))
                },
                handler: { [weak self] events in self?.socketEvent(events) }
            )
        } catch {
            fail(error as? SesameError ?? SesameError(.tlsHandshakeFailed, "\(error)"))
            return
        }
        perform(machine.tcpConnected(usesTLS: tls != nil, now: loop.now))
    }

    private func makeEngine(
        _ configuration: TLSConfiguration,
        _ context: TLSContext,
        serverName: String,
        port: Int
    ) throws(SesameError) -> TLSEngine {
        try TLSEngine(
            context: context,
            configuration: configuration,
            serverName: serverName,
            port: port,
            inboundCapacity: Self.inboundCapacity
        )
    }

    /// How much ciphertext a connection holds before OpenSSL reads it: one socket read's worth,
    /// at least one whole record (so that a record can always complete).
    static let inboundCapacity = 65_536

    /// Starts TLS for `serverName`:`port` on this established connection (after a proxy's
    /// `CONNECT`); inside the current TLS session when there is one (TLS inside TLS).
    /// `received`: bytes of the new stream read past the proxy's response. `continuation`
    /// resumes once the handshake and its decisions are done.
    func beginTLS(
        serverName: String,
        port: Int,
        configuration: TLSConfiguration,
        context: TLSContext,
        hooks: TLSHandshakeHooks,
        received: [UInt8],
        continuation: CheckedContinuation<Void, any Error>
    ) {
        assert(loop.inEventLoop)
        guard machine.phase == .established, handler == nil, tls?.carrier == nil else {
            continuation.resume(
                throwing: SesameError(
                    .invalidArgument,
                    "TLS can start only on an established connection that carries no tunnel and no protocol yet"
                )
            )
            return
        }
        let stack: TLSStack
        do {
            stack = TLSStack(
                try makeEngine(configuration, context, serverName: serverName, port: port),
                inside: tls?.inner
            )
        } catch {
            continuation.resume(throwing: error)
            return
        }
        // The server speaks only after the ClientHello: whatever is here cannot be its TLS.
        if !received.isEmpty {
            let taken = received.withUnsafeBytes { stack.receiveInner($0) }
            guard taken == received.count else {
                let error = SesameError(
                    .protocolError,
                    "\(machine.peer) sent \(received.count) bytes before the TLS handshake began"
                )
                continuation.resume(throwing: error)
                fail(error)
                return
            }
        }
        tls = stack
        self.hooks = hooks
        waitingToConnect = continuation
        perform(
            machine.tlsStarted(
                connectTimeout: connectTimeout,
                handshakeTimeout: configuration.handshakeTimeout,
                now: loop.now
            )
        )
    }

    // MARK: The protocol above

    /// Hands the established connection to the protocol it carries from now on; what already
    /// arrived (plaintext held in the TLS engine) reaches it at once.
    func attach(_ handler: any ConnectionHandler) {
        assert(loop.inEventLoop)
        self.handler = handler
        guard machine.phase != .closed else {
            handler.connectionClosed(closedError)
            self.handler = nil
            return
        }
        resumeInput()
    }

    /// Lets the protocol go (a CONNECT's answer came, and TLS starts next); nothing more reaches it.
    func detachHandler() {
        assert(loop.inEventLoop)
        handler = nil
        updateInterest()
    }

    /// The protocol takes input again: what the TLS engine holds is delivered, then the socket
    /// is watched.
    func resumeInput() {
        assert(loop.inEventLoop)
        socketDrained = false  // unwatched meanwhile, the socket may hold more
        readInput()
        updateInterest()
    }

    /// Queues `bytes` (encrypted with TLS) and hands what it can to the kernel; the rest goes
    /// when the socket takes it (``ConnectionHandler/outputFlushed()`` tells when all of it did).
    /// - Throws: the connection's failure when it is closed.
    func send(_ bytes: [UInt8]) throws(SesameError) {
        assert(loop.inEventLoop)
        guard machine.phase == .established, let channel else { throw closedError }
        if let tls {
            do {
                try tls.inner.write(bytes)
            } catch {
                fail(error)
                throw error
            }
        } else {
            channel.enqueue(bytes)
        }
        flushOutput()
    }

    /// What a call on the closed connection fails with: why it closed.
    var closedError: SesameError {
        failure ?? SesameError(.connectionClosed, "\(machine.peer): the connection is closed")
    }

    /// Bytes written and not yet taken by the kernel.
    var pendingOutputCount: Int { channel?.pendingOutputCount ?? 0 }

    /// Sends close_notify (best effort) and closes: what waits on the connection fails with
    /// ``SesameError/Code/connectionClosed``.
    func closeNow() {
        assert(loop.inEventLoop)
        guard machine.phase != .closed else { return }
        if machine.phase == .established, let tls {
            tls.close()
            flushOutput()
        }
        fail(SesameError(.connectionClosed, "\(machine.peer): the connection was closed"))
    }

    // MARK: Events

    private func socketEvent(_ events: UInt32) {
        guard machine.phase != .closed else { return }
        if events & EpollEvents.writable != 0 { flushOutput() }
        if events & (EpollEvents.readable | EpollEvents.error | EpollEvents.hangUp) != 0 {
            socketDrained = false
            switch machine.phase {
            case .handshaking:
                while !socketEnded, readSocket() > 0, !socketDrained {}
                if socketEnded {
                    perform(machine.inputEnded())
                } else {
                    driveHandshake()
                }
            case .established:
                readInput()
            case .idle, .connecting, .deciding, .closed:
                break
            }
        }
        updateInterest()
    }

    /// How many deliveries (of up to 64 KiB each) one turn of the loop makes to a connection's
    /// protocol: a peer that sends faster than it is read does not keep the loop from the others.
    static let deliveriesPerTurn = 16

    /// Delivers what arrives to the protocol while it takes more: decrypted from what the TLS
    /// engine holds, then from the socket until the kernel holds no more, or the turn's share is
    /// used up (the rest is read in a later turn).
    private func readInput() {
        var deliveries = 0
        while machine.phase == .established, !machine.inputEnded, let handler, handler.wantsInput {
            guard deliveries < Self.deliveriesPerTurn else {
                // What the TLS engine holds shows in no epoll event: the loop comes back for it.
                _ = loop.execute { [weak self] in self?.resumeInput() }
                return
            }
            deliveries += 1
            guard let tls else {
                guard readPlain(into: handler) else { return }
                continue
            }
            switch tls.read(maxLength: 65_536, socketEnded: socketEnded, scratch: loop.decryptBuffer) {
            case .bytes(let bytes):
                if tls.hasPendingOutput { flushOutput() }  // reading can produce output (key updates)
                handler.received(bytes)
            case .needsInput:
                if tls.hasPendingOutput { flushOutput() }
                guard !socketDrained, readSocket() > 0 || socketEnded else { return }
            case .closeNotify:
                return endInput(cleanly: true)
            case .truncated:
                if let error = socketError ?? tls.carrierFailure { return fail(error) }
                return endInput(cleanly: false)
            case .failed(let error):
                return fail(error)
            }
        }
    }

    /// One socket read for a plain connection, handed to `handler`; false when nothing more is
    /// to be read now.
    private func readPlain(into handler: any ConnectionHandler) -> Bool {
        if socketEnded {
            if let socketError { fail(socketError) } else { endInput(cleanly: true) }
            return false
        }
        guard let channel, !socketDrained else { return false }
        let buffer = loop.readBuffer
        switch channel.read(into: buffer) {
        case .done(let count):
            if count < buffer.count { socketDrained = true }
            handler.received([UInt8](UnsafeRawBufferPointer(rebasing: buffer[0..<count])))
        case .wouldBlock:
            socketDrained = true
            return false
        case .endOfFile:
            socketEnded = true
        case .failed(let code):
            socketEnded = true
            socketError = socketFailure(code)
        }
        return true
    }

    /// Reads ciphertext from the socket into the TLS engine (straight into its inbound space, up
    /// to twice where its ring wraps); returns how many bytes came.
    @discardableResult
    private func readSocket() -> Int {
        guard let channel, let tls, !socketEnded else { return 0 }
        var total = 0
        for _ in 0..<2 {
            guard let space = tls.inboundSpace() else { return total }
            switch channel.read(into: space) {
            case .done(let count):
                tls.commitInbound(count)
                total += count
                if count < space.count {
                    socketDrained = true
                    return total
                }
            case .wouldBlock:
                socketDrained = true
                return total
            case .endOfFile:
                socketEnded = true
                return total
            case .failed(let code):
                // Not failed yet: what arrived before the reset (often an alert) explains it better.
                socketEnded = true
                socketError = socketFailure(code)
                return total
            }
        }
        return total
    }

    /// What a failed socket call means: the peer reset the stream (`ECONNRESET`, or `EPIPE` on a
    /// write), else an I/O error.
    private func socketFailure(_ code: Int32) -> SesameError {
        SesameError(
            code == ECONNRESET || code == EPIPE ? .connectionReset : .ioError,
            "\(machine.peer): \(errnoText(code))"
        )
    }

    /// The stream carries no more bytes: the protocol learns it once.
    private func endInput(cleanly: Bool) {
        guard !machine.inputEnded else { return }
        _ = machine.inputEnded()
        facts.withLock {
            $0.closed = true
            if !cleanly { $0.closedWithoutNotify = true }
        }
        handler?.inputEnded(cleanly: cleanly)
    }

    /// Hands what waits (TLS records, or plain bytes) to the kernel.
    private func flushOutput() {
        guard let channel else { return }
        if let tls, tls.hasPendingOutput {
            do {
                try channel.appendOutput { (buffer: inout [UInt8]) throws(SesameError) in
                    try tls.drainOutput(into: &buffer)
                }
            } catch {
                return fail(error)
            }
        }
        switch channel.flush() {
        case .wouldBlock:
            updateInterest()  // the rest goes when the socket is writable again
        case .failed(let code):
            failExplained(socketFailure(code))
        case .flushed:
            handler?.outputFlushed()
        }
    }

    /// Fails with the reason the peer gave (an alert it sent before closing), else with `fallback`.
    private func failExplained(_ fallback: SesameError) {
        guard machine.phase != .closed else { return }
        guard let tls else { return fail(fallback) }
        while !socketEnded, readSocket() > 0 {}
        socketEnded = true
        if socketError == nil { socketError = fallback }
        if machine.phase == .handshaking {
            driveHandshake()  // fails with the alert's reason, or with `socketError`
            if machine.phase != .closed { fail(fallback) }
            return
        }
        fail(tls.receivedAlert() ?? fallback)
    }

    private func updateInterest() {
        guard let channel, channel.isRegistered, machine.phase != .closed else { return }
        let interest = machine.interest(
            protocolWantsInput: handler?.wantsInput ?? false,
            hasPendingOutput: channel.hasPendingOutput
        )
        if socketEnded && interest & EpollEvents.writable == 0 {
            // A closed peer keeps the socket readable (and may report HUP): stop watching it.
            channel.stopWatching()
            return
        }
        channel.watch(interest)
    }

    // MARK: The handshake

    private func driveHandshake() {
        guard machine.phase == .handshaking, let tls else { return }
        tls.pumpCarrier(inputEnded: socketEnded, scratch: loop.decryptBuffer)
        let step = tls.inner.handshake()
        flushOutput()
        guard machine.phase == .handshaking else { return }  // the flush may have failed it
        if case .needsInput = step, tls.inputEnded(socketEnded: socketEnded) { _ = machine.inputEnded() }
        perform(machine.handshakeStepped(step))
    }

    private func askTrust(resumed: Bool) {
        guard let tls else { return }
        let request = tls.inner.trustRequest(resumed: resumed)
        let hook: @Sendable (ServerTrust) async throws -> Bool?
        if let explicit = hooks.serverTrust {
            hook = { try await explicit($0) }
        } else if let delegateTrust = hooks.delegateTrust {
            hook = delegateTrust
        } else {
            // Default handling needs no suspension: evaluated right here on the loop.
            let evaluation = tls.inner.evaluateByDefault(request)
            return trustDecided(evaluation.isTrusted, evaluation: evaluation)
        }
        ask { [self] in
            let accepted = try await hook(request)
            return { [self] in
                guard let accepted else {
                    guard let current = self.tls else { return }
                    let evaluation = current.inner.evaluateByDefault(request)
                    return trustDecided(evaluation.isTrusted, evaluation: evaluation)
                }
                trustDecided(accepted, evaluation: nil)
            }
        }
    }

    private func askIdentity() {
        guard let tls, let hook = hooks.clientCertificate else { return identityDecided(nil) }
        let request = tls.inner.identityRequest()
        ask { [self] in
            let identity = try await hook(request)
            return { [self] in identityDecided(identity) }
        }
    }

    /// Runs a hook off the loop (it may take as long as it likes); what it returns runs on the
    /// loop, where the handshake goes on. A hook that throws ends the handshake with its error.
    private func ask(_ hook: @escaping @Sendable () async throws -> (() -> Void)) {
        let loop = self.loop
        Task {
            do {
                let then = try await hook()
                // safe: the closure runs on the loop, where the connection it touches lives.
                loop.execute(LoopBound(then).run)
            } catch {
                loop.execute { [self] in
                    guard machine.phase == .deciding || machine.phase == .handshaking else { return }
                    fail(
                        error as? SesameError
                            ?? SesameError(.tlsHandshakeFailed, "the handshake was abandoned: \(error)")
                    )
                }
            }
        }
    }

    private func trustDecided(_ accepted: Bool, evaluation: TrustEvaluationResult?) {
        guard machine.phase == .deciding, let tls else { return }
        tls.inner.decideTrust(accepted, evaluation: evaluation)
        perform(machine.decided(now: loop.now))
    }

    private func identityDecided(_ identity: Identity?) {
        guard machine.phase == .deciding, let tls else { return }
        do {
            try tls.inner.decideIdentity(identity)
        } catch {
            return fail(error)
        }
        perform(machine.decided(now: loop.now))
    }

    // MARK: Acting on the machine

    /// Does what the machine asked for (`connect` does the TCP part), then keeps the timer and the
    /// socket's watch in step with it.
    private func perform(_ action: ConnectionStateMachine.Action, connect: () -> Void = {}) {
        switch action {
        case .none: break
        case .connect: connect()
        case .driveHandshake: driveHandshake()
        case .askTrust(let resumed): askTrust(resumed: resumed)
        case .askIdentity: askIdentity()
        case .established: established()
        case .failHandshakeInputEnded:
            let ended =
                socketError ?? tls?.carrierFailure
                ?? SesameError(.connectionClosed, "\(machine.peer) closed the connection during the TLS handshake")
            fail(tls.map { $0.inner.endedDuringHandshake(ended) } ?? ended)
        case .fail(let error): tearDown(error)
        }
        keepTimer()
        updateInterest()
    }

    private func established() {
        if let tls { facts.withLock { $0.tlsInfo = tls.inner.connectionInfo(remoteAddress: $0.remoteAddress) } }
        let waiting = waitingToConnect
        waitingToConnect = nil
        waiting?.resume()
        // What came with the handshake's last flight (a ticket, an alert) waits in the engine.
        readInput()
    }

    private func keepTimer() {
        let next = machine.nextDeadline
        if let timer, timer.at == next { return }
        if let timer { loop.cancelTimer(timer.handle) }
        timer = nil
        guard let next else { return }
        let handle = loop.scheduleTimer(at: next) { [weak self] in
            guard let self else { return }
            timer = nil
            perform(machine.deadlinePassed(now: loop.now))
        }
        timer = (handle, next)
    }

    /// Fails the connection with `error` (nothing happens once it is closed).
    func fail(_ error: SesameError) {
        assert(loop.inEventLoop)
        perform(machine.failed(error))
    }

    /// Releases the socket and the TLS session, then tells whoever waits. Released first: a
    /// caller that then ends the process (the command-line tool on a refused certificate) finds
    /// nothing half freed.
    private func tearDown(_ error: SesameError) {
        failure = error
        connector?.cancel(error)
        connector = nil
        channel?.close()
        channel = nil
        tls = nil  // the engines, and with them the SSLs and their BIOs, are freed here
        facts.withLock { $0.closed = true }
        let waiting = waitingToConnect
        waitingToConnect = nil
        let protocolAbove = handler
        handler = nil
        waiting?.resume(throwing: error)
        protocolAbove?.connectionClosed(error)
    }
}

/// A closure made for the loop, carried through a task that runs elsewhere: it is only ever
/// called on the loop (the caller's promise), so what it captures is never touched elsewhere.
struct LoopBound: @unchecked Sendable {
    // @unchecked: see the type's comment.
    private let body: () -> Void
    init(_ body: @escaping () -> Void) { self.body = body }
    var run: @Sendable () -> Void { { [self] in self.body() } }
}
