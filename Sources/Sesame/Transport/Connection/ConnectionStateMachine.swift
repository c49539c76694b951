import FoundationEssentials

/// A connection's life as a value-type state machine: connecting, the TLS handshake with its
/// stops for decisions, established, closed; the two clocks that bound connecting; and what the
/// socket is watched for. Events in, actions out, no I/O: the ``Connection`` that holds it moves
/// the bytes and runs the TLS engine, on its loop, and tells it what came of each step.
struct ConnectionStateMachine {
    enum Phase: Equatable {
        case idle
        /// Finding a TCP connection to one of the addresses.
        case connecting
        /// The TLS handshake reads and writes.
        case handshaking
        /// The handshake waits for a decision (server trust, a client identity): the socket is
        /// not watched (no CPU, and what the server sends meanwhile waits in the kernel), and the
        /// handshake clock stands still.
        case deciding
        /// Carries data.
        case established
        case closed
    }

    /// What the connection does next.
    enum Action: Equatable {
        case none
        /// Start TCP to the resolved addresses.
        case connect
        /// Run the TLS engine's handshake as far as the bytes and decisions allow, and tell
        /// ``handshakeStepped(_:)`` what it said.
        case driveHandshake
        /// Ask the hooks whether to trust the server.
        case askTrust(resumed: Bool)
        /// Ask the hooks for a client identity.
        case askIdentity
        /// Connecting is done: publish what TLS agreed on and resume whoever waits.
        case established
        /// The handshake's input ended before it finished: fail with what the TLS engine makes
        /// of that.
        case failHandshakeInputEnded
        /// Fail with this error (everything waiting fails with it, the socket closes).
        case fail(SesameError)
    }

    /// "host:port", for messages.
    let peer: String
    private(set) var phase = Phase.idle
    /// No more bytes will arrive: the peer ended the stream, reset it, or a tunnel ended.
    private(set) var inputEnded = false
    /// Connecting as a whole (TCP, then the handshake and its decisions) ends here.
    private var connectDeadline: (at: ContinuousClock.Instant, limit: Duration)?
    /// The handshake's own clock, stopped while a decision is asked for.
    private var handshakeDeadline: (at: ContinuousClock.Instant, limit: Duration)?
    private var handshakeTimeout: Duration

    init(peer: String, handshakeTimeout: Duration) {
        self.peer = peer
        self.handshakeTimeout = handshakeTimeout
    }

    /// The earliest instant at which ``deadlinePassed(now:)`` has something to do.
    var nextDeadline: ContinuousClock.Instant? {
        switch (connectDeadline?.at, handshakeDeadline?.at) {
        case (let a?, let b?): min(a, b)
        case (let a?, nil): a
        case (nil, let b?): b
        case (nil, nil): nil
        }
    }

    // MARK: Events

    mutating func start(connectTimeout: Duration, now: ContinuousClock.Instant) -> Action {
        guard phase == .idle else { return .none }
        phase = .connecting
        connectDeadline = (now + connectTimeout, connectTimeout)
        return .connect
    }

    /// TCP is connected: the handshake starts, or (plain TCP) connecting is done.
    mutating func tcpConnected(usesTLS: Bool, now: ContinuousClock.Instant) -> Action {
        guard phase == .connecting else { return .none }
        guard usesTLS else { return establish() }
        phase = .handshaking
        handshakeDeadline = (now + handshakeTimeout, handshakeTimeout)
        return .driveHandshake
    }

    /// TLS starts on the established connection (a proxy's tunnel): a new handshake, bounded
    /// like the first connection.
    mutating func tlsStarted(
        connectTimeout: Duration,
        handshakeTimeout: Duration,
        now: ContinuousClock.Instant
    ) -> Action {
        guard phase == .established else { return .none }
        self.handshakeTimeout = handshakeTimeout
        phase = .handshaking
        connectDeadline = (now + connectTimeout, connectTimeout)
        handshakeDeadline = (now + handshakeTimeout, handshakeTimeout)
        return .driveHandshake
    }

    /// What one run of the handshake said.
    mutating func handshakeStepped(_ step: TLSEngine.HandshakeStep) -> Action {
        guard phase == .handshaking else { return .none }
        switch step {
        case .needsInput:
            return inputEnded ? .failHandshakeInputEnded : .none
        case .waitingForDecision:
            return .none
        case .decideTrust(let resumed):
            suspendForDecision()
            return .askTrust(resumed: resumed)
        case .decideIdentity:
            suspendForDecision()
            return .askIdentity
        case .established:
            return establish()
        case .failed(let error):
            return failed(error)
        }
    }

    /// The decision asked for came back: the handshake goes on, its clock running again.
    mutating func decided(now: ContinuousClock.Instant) -> Action {
        guard phase == .deciding else { return .none }
        phase = .handshaking
        handshakeDeadline = (now + handshakeTimeout, handshakeTimeout)
        return .driveHandshake
    }

    /// No more bytes will arrive. During the handshake it reads what came before the end (an
    /// alert explains it better than the end itself).
    mutating func inputEnded(_ ended: Bool = true) -> Action {
        inputEnded = inputEnded || ended
        switch phase {
        case .handshaking:
            return .driveHandshake
        case .deciding:
            return failed(
                SesameError(
                    .connectionClosed,
                    "\(peer) closed the connection while the handshake waited for a decision"
                )
            )
        case .idle, .connecting, .established, .closed:
            return .none
        }
    }

    /// A timer set for ``nextDeadline`` fired.
    mutating func deadlinePassed(now: ContinuousClock.Instant) -> Action {
        if let (at, limit) = connectDeadline, now >= at {
            let stage = phase == .connecting ? "no TCP connection" : "the TLS handshake did not finish"
            return failed(SesameError(.connectTimeout, "\(peer): \(stage) within the connect timeout (\(limit))"))
        }
        if let (at, limit) = handshakeDeadline, now >= at {
            return failed(SesameError(.timeout, "TLS handshake with \(peer) did not finish within \(limit)"))
        }
        return .none
    }

    /// The connection fails (or is closed) with `error`, unless it already did.
    mutating func failed(_ error: SesameError) -> Action {
        guard phase != .closed else { return .none }
        phase = .closed
        inputEnded = true
        connectDeadline = nil
        handshakeDeadline = nil
        return .fail(error)
    }

    // MARK: What the socket is watched for

    /// The epoll events to watch for: reading while the handshake reads, or while established
    /// and the protocol above takes input; writing while output waits for the kernel.
    func interest(protocolWantsInput: Bool, hasPendingOutput: Bool) -> UInt32 {
        var events: UInt32 = 0
        switch phase {
        case .handshaking:
            if !inputEnded { events = EpollEvents.readable }
        case .established:
            if !inputEnded, protocolWantsInput { events = EpollEvents.readable }
        case .idle, .connecting, .deciding, .closed:
            break
        }
        if hasPendingOutput, phase != .closed { events |= EpollEvents.writable }
        return events
    }

    // MARK: Transitions

    private mutating func suspendForDecision() {
        phase = .deciding
        handshakeDeadline = nil
    }

    private mutating func establish() -> Action {
        phase = .established
        connectDeadline = nil
        handshakeDeadline = nil
        return .established
    }
}
