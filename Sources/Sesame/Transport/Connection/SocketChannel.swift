import FoundationEssentials
import Glibc

/// A connected socket on an event loop: the descriptor, its epoll registration and the bytes
/// waiting for the kernel to take them. It moves bytes and keeps the registration in step with
/// what its owner asks for; what to watch is the owner's decision (a connection derives it from
/// its state machine). Loop-confined.
final class SocketChannel {
    let socket: Socket
    private let loop: EventLoop
    private(set) var isRegistered = false
    /// What the socket is watched for (as registered with the loop).
    private(set) var interest: UInt32 = 0
    private var outbound: [UInt8] = []
    private var outboundOffset = 0

    init(socket: Socket, loop: EventLoop) {
        self.socket = socket
        self.loop = loop
    }

    /// Registers the socket with the loop, watched for nothing yet. `shutDown` runs if the loop
    /// shuts down first.
    func register(shutDown: @escaping () -> Void, handler: @escaping (UInt32) -> Void) throws {
        try loop.register(fd: socket.fd, interest: 0, shutDown: shutDown, handler: handler)
        isRegistered = true
    }

    /// Watches the socket for `events` (no system call when they are already watched).
    func watch(_ events: UInt32) {
        guard isRegistered else { return }
        interest = events
        loop.setInterest(fd: socket.fd, events)
    }

    /// Stops watching the socket at all (it stays open).
    func stopWatching() {
        guard isRegistered else { return }
        loop.deregister(fd: socket.fd)
        isRegistered = false
        interest = 0
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> Socket.IOResult { socket.read(into: buffer) }

    // MARK: Output

    /// True while bytes wait for the kernel (the socket should then be watched for writing).
    var hasPendingOutput: Bool { outboundOffset < outbound.count }

    /// Appends to what waits to be written: `bytes`, or what `fill` appends (a TLS engine's
    /// records, moved without an intermediate copy).
    func enqueue(_ bytes: [UInt8]) { appendOutput { $0.append(contentsOf: bytes) } }

    func appendOutput<Failure: Error>(_ fill: (inout [UInt8]) throws(Failure) -> Void) throws(Failure) {
        if outboundOffset == outbound.count {
            outbound.removeAll(keepingCapacity: true)
            outboundOffset = 0
        }
        try fill(&outbound)
    }

    /// How many bytes wait for the kernel.
    var pendingOutputCount: Int { outbound.count - outboundOffset }

    enum FlushResult: Equatable {
        /// Everything was handed to the kernel.
        case flushed
        /// The kernel's buffer is full: the rest waits for the socket to become writable.
        case wouldBlock
        /// The write failed with this errno; what waited was dropped.
        case failed(Int32)
    }

    /// Hands what waits to the kernel, as much as it takes.
    func flush() -> FlushResult {
        while outboundOffset < outbound.count {
            let result = outbound.withUnsafeBytes { raw in
                socket.write(UnsafeRawBufferPointer(rebasing: raw[outboundOffset...]))
            }
            switch result {
            case .done(let count): outboundOffset += count
            case .wouldBlock, .endOfFile: return .wouldBlock
            case .failed(let code):
                discardOutput()
                return .failed(code)
            }
        }
        outbound.removeAll(keepingCapacity: true)
        outboundOffset = 0
        return .flushed
    }

    func discardOutput() {
        outbound = []
        outboundOffset = 0
    }

    // MARK: Closing

    /// Deregisters and closes the socket.
    func close() {
        stopWatching()
        socket.close()
        discardOutput()
    }
}
