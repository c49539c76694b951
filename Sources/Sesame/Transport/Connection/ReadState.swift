/// Who reads a connection's socket, and so what the loop watches it for: one value instead of a
/// set of flags that had to agree. The input's own facts (the peer closed its side, the stream
/// ended) are apart: they are what happened to the bytes, not who waits for them.
///
/// The transitions are the events below; each leaves the state alone where it does not apply (a
/// read answered on a caller's thread does not change whose the socket is). ``interest(inputEnded:peerClosed:)``
/// is the rule for epoll, with no other input.
enum ReadState: Equatable {
    /// Not connected yet, or closed: nothing is watched.
    case inactive
    /// The TLS handshake reads the socket.
    case handshaking
    /// The handshake waits for a delegate's decision: the socket is not polled (no CPU), and
    /// what the server sends meanwhile waits in the kernel.
    case awaitingDecision
    /// Established, no read waiting, the loop reads: watched for reading, so that an idle
    /// connection notices the peer closing and the next read needs no `epoll_ctl`.
    case idle
    /// Established, and bytes arrived while no read waited: not watched again before the next
    /// read, so an idle connection buffers at most one socket read.
    case holdingUnsolicitedInput
    /// The loop serves a waiting read.
    case loopReading
    /// A caller's thread waits in ppoll(2) for the waiting read's bytes and reads them itself:
    /// the loop leaves the socket's bytes to it, watching only for the peer closing (see
    /// `Connection+InlineWait.swift`).
    case callerWaiting
    /// A caller's thread reads this connection (its last read was waited for there), between
    /// its reads too: watched only for the peer closing, so that a body's next bytes or the next
    /// answer do not wake the loop thread, which would take the loop from the reader.
    case callerReading

    /// The epoll events for reading (the writable bit is the outbound buffer's business).
    func interest(inputEnded: Bool, peerClosed: Bool) -> UInt32 {
        guard !inputEnded else { return 0 }
        switch self {
        case .handshaking, .idle, .loopReading: return EpollEvents.readable
        // The same watch while the caller waits and between its reads: no epoll_ctl per request.
        case .callerWaiting, .callerReading: return peerClosed ? 0 : EpollEvents.peerClosed
        case .inactive, .awaitingDecision, .holdingUnsolicitedInput: return 0
        }
    }

    /// True while a caller's thread waits on the socket itself.
    var callerIsWaiting: Bool { self == .callerWaiting }

    // MARK: Events

    /// A read starts. From the loop's side it is the loop's to serve; a caller's thread that
    /// reads the connection keeps it until it waits (``callerBeganWaiting()``) or hands the read
    /// over (``readHandedToLoop()``).
    mutating func readStarted() {
        if self == .idle || self == .holdingUnsolicitedInput { self = .loopReading }
    }

    /// The waiting read was answered.
    mutating func readAnswered() {
        if self == .loopReading { self = .idle }
    }

    /// Bytes arrived and no read waits for them.
    mutating func unaskedBytesArrived() {
        if self == .idle { self = .holdingUnsolicitedInput }
    }

    /// A caller's thread starts waiting for the read's bytes.
    mutating func callerBeganWaiting() {
        self = .callerWaiting
    }

    /// The caller's wait ended (bytes came, the limit passed, or the connection ended); with
    /// `readStillWaiting`, the loop serves the read from here.
    mutating func callerStoppedWaiting(readStillWaiting: Bool) {
        guard self == .callerWaiting else { return }
        self = readStillWaiting ? .loopReading : .callerReading
    }

    /// A read that a caller's thread started goes through the loop after all.
    mutating func readHandedToLoop() {
        if self == .callerReading { self = .loopReading }
    }

    /// The handshake asks a delegate, and later has its answer.
    mutating func decisionAsked() {
        if self == .handshaking { self = .awaitingDecision }
    }

    mutating func decisionAnswered() {
        if self == .awaitingDecision { self = .handshaking }
    }
}
