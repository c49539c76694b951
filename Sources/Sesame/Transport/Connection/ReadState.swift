/// Who reads a connection's socket, and so what the loop watches it for: one value instead of a
/// set of flags that had to agree. The input's own facts (the peer closed its side, the stream
/// ended) are apart: they are what happened to the bytes, not who waits for them.
///
/// The transitions are the events below; each leaves the state alone where it does not apply (an
/// answered read leaves a handshake's socket to the handshake). ``interest(inputEnded:)`` is the
/// rule for epoll, with no other input.
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

    /// The epoll events for reading (the writable bit is the outbound buffer's business).
    func interest(inputEnded: Bool) -> UInt32 {
        guard !inputEnded else { return 0 }
        switch self {
        case .handshaking, .idle, .loopReading: return EpollEvents.readable
        case .inactive, .awaitingDecision, .holdingUnsolicitedInput: return 0
        }
    }

    // MARK: Events

    /// A read starts: the loop serves it.
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

    /// The handshake asks a delegate, and later has its answer.
    mutating func decisionAsked() {
        if self == .handshaking { self = .awaitingDecision }
    }

    mutating func decisionAnswered() {
        if self == .awaitingDecision { self = .handshaking }
    }
}
