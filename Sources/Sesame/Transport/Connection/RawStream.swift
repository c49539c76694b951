import FoundationEssentials

/// The plain byte stream of ``Connection``'s public API (``Connection/read(maxLength:timeout:)``,
/// ``Connection/write(_:)``): what arrives waits here, up to a bound, for one read at a time.
/// Loop-confined.
final class RawStream: ConnectionHandler {
    private unowned let connection: Connection
    private var buffered: [UInt8] = []
    private var offset = 0
    private var ended = false
    private var failure: SesameError?
    private var reader: Reader?
    private var writers: [CheckedContinuation<Void, any Error>] = []
    /// The one timer watching the reader's deadline, and when it fires.
    private var timer: (handle: TimerHandle, at: ContinuousClock.Instant)?

    private struct Reader {
        let maxLength: Int
        let continuation: CheckedContinuation<[UInt8]?, any Error>
        let deadline: (at: ContinuousClock.Instant, timeout: Duration)?
        /// At its deadline the read ends with nil and the connection goes on (else it fails).
        let quiet: Bool
    }

    /// The most that waits here before the connection stops reading.
    static let bufferLimit = 65_536

    init(_ connection: Connection) { self.connection = connection }

    var wantsInput: Bool { buffered.count - offset < Self.bufferLimit }

    /// Takes what waits here (nothing is read for the stream afterwards).
    func takeBuffered() -> [UInt8] {
        defer {
            buffered = []
            offset = 0
        }
        return Array(buffered[offset...])
    }

    /// True while a read waits.
    var isReading: Bool { reader != nil }

    /// Starts a read of up to `maxLength` bytes; an empty answer is the end of the stream. Past
    /// `timeout` with nothing, a `quiet` read ends with nil; any other fails with
    /// ``SesameError/Code/timeout`` and the connection closes.
    func read(
        maxLength: Int,
        timeout: Duration?,
        quiet: Bool = false,
        continuation: CheckedContinuation<[UInt8]?, any Error>
    ) {
        guard reader == nil else {
            return continuation.resume(throwing: SesameError(.invalidArgument, "only one read at a time"))
        }
        let deadline = timeout.map { (connection.loop.now + $0, $0) }
        reader = Reader(
            maxLength: maxLength,
            continuation: continuation,
            deadline: deadline,
            quiet: quiet
        )
        serve()
        if reader != nil, let deadline { watch(deadline.0) }
    }

    /// Adds a writer waiting for everything written to reach the kernel.
    func awaitFlush(_ continuation: CheckedContinuation<Void, any Error>) {
        if let failure { return continuation.resume(throwing: failure) }
        guard connection.pendingOutputCount > 0 else { return continuation.resume() }
        writers.append(continuation)
    }

    // MARK: ConnectionHandler

    func received(_ bytes: [UInt8]) {
        if offset == buffered.count {
            buffered = bytes
            offset = 0
        } else {
            buffered += bytes
        }
        serve()
    }

    func inputEnded(cleanly: Bool) {
        ended = true
        serve()
    }

    func outputFlushed() {
        let waiting = writers
        writers = []
        for writer in waiting { writer.resume() }
    }

    func connectionClosed(_ error: SesameError) {
        failure = error
        if let timer { connection.loop.cancelTimer(timer.handle) }
        timer = nil
        let waiting = writers
        writers = []
        for writer in waiting { writer.resume(throwing: error) }
        if let reader {
            self.reader = nil
            reader.continuation.resume(throwing: error)
        }
    }

    // MARK: Serving the read

    private func serve() {
        guard let reader else { return }
        if offset < buffered.count {
            let wasFull = !wantsInput
            let end = min(buffered.count, offset + reader.maxLength)
            let bytes: [UInt8]
            if offset == 0 && end == buffered.count {
                bytes = buffered
                buffered = []
            } else {
                bytes = Array(buffered[offset..<end])
                offset = end
                if offset == buffered.count {
                    buffered.removeAll(keepingCapacity: true)
                    offset = 0
                }
            }
            self.reader = nil
            reader.continuation.resume(returning: bytes)
            if wasFull { connection.resumeInput() }
        } else if ended {
            self.reader = nil
            reader.continuation.resume(returning: [])
        } else if let failure {
            self.reader = nil
            reader.continuation.resume(throwing: failure)
        }
    }

    private func watch(_ deadline: ContinuousClock.Instant) {
        if let timer, timer.at <= deadline { return }
        if let timer { connection.loop.cancelTimer(timer.handle) }
        let handle = connection.loop.scheduleTimer(at: deadline) { [weak self] in self?.deadlinePassed() }
        timer = (handle, deadline)
    }

    private func deadlinePassed() {
        timer = nil
        guard let reader, let (at, timeout) = reader.deadline else { return }
        guard connection.loop.now >= at else { return watch(at) }
        if reader.quiet {
            self.reader = nil
            reader.continuation.resume(returning: nil)
        } else {
            connection.fail(SesameError(.timeout, "\(connection.host):\(connection.port) sent nothing for \(timeout)"))
        }
    }
}
