import FoundationEssentials
import Glibc

/// A loopback TCP port where connecting stalls, for testing timeouts: either the TCP connection
/// never completes (the listener's accept queue is kept full, so the kernel drops new SYNs), or it
/// completes and the server never says a word (so a TLS handshake or a response never comes).
///
/// Everything stays on `127.0.0.1`; ``close()`` (or deinit) releases the sockets.
public final class StalledListener: @unchecked Sendable {
    // @unchecked: the descriptors are set up in init and released once, under `lock`.
    /// How the listener stalls.
    public enum Mode: Sendable {
        /// `connect(2)` never finishes.
        case neverAccepts
        /// The connection is accepted and held open; nothing is ever sent.
        case acceptsAndSaysNothing
    }

    /// The port to connect to.
    public let port: Int
    private let listener: Int32
    private let lock = ThreadLock()
    private var held: [Int32] = []
    private var closed = false
    /// The accept thread closes the listener when it ends (`acceptsAndSaysNothing`).
    private var acceptThreadOwnsListener = false

    /// A listener on a free loopback port that stalls as `mode` says.
    public init(_ mode: Mode) throws {
        let opened = try LoopbackListener.open(backlog: mode == .neverAccepts ? 0 : 16)
        let fd = opened.descriptor
        var address = opened.address
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        switch mode {
        case .neverAccepts:
            // Fill the accept queue (backlog 0 holds one) with connections nobody accepts.
            for _ in 0..<4 {
                let client = socket(
                    AF_INET,
                    Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
                    0
                )
                guard client >= 0 else { continue }
                _ = withUnsafePointer(to: &address) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        Glibc.connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                held.append(client)
            }
            usleep(100_000)  // the kernel completes the queued handshakes
        case .acceptsAndSaysNothing:
            acceptThreadOwnsListener = true
            ServerThread.start { [self] in
                // This thread closes the listener, once it no longer calls accept(2) on it: closed
                // by `close()`, its number could go to another socket of the process meanwhile.
                defer { Glibc.close(fd) }
                while true {
                    let accepted = accept(fd, nil, nil)
                    guard accepted >= 0 else {
                        if errno == EINTR { continue }
                        return  // the listener was shut down
                    }
                    let keep = lock.withLock { () -> Bool in
                        if closed { return false }
                        held.append(accepted)
                        return true
                    }
                    guard keep else {
                        Glibc.close(accepted)
                        return
                    }
                }
            }
        }
    }

    /// Releases the listener and every connection held.
    public func close() {
        let descriptors = lock.withLock { () -> [Int32] in
            if closed { return [] }
            closed = true
            defer { held = [] }
            // shutdown wakes an accept(2) blocked on the listener; its thread then closes it.
            shutdown(listener, Int32(SHUT_RDWR))
            return acceptThreadOwnsListener ? held : held + [listener]
        }
        for fd in descriptors {
            shutdown(fd, Int32(SHUT_RDWR))
            Glibc.close(fd)
        }
    }

    deinit { close() }
}
