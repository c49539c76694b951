import FoundationEssentials
import Glibc

/// Loopback TCP ports and sockets for test servers and peers.
public enum LoopbackPort {
    /// A port on 127.0.0.1 that nothing listened on a moment ago (bound to port 0, then released).
    public static func unused() -> Int {
        guard let fd = try? bind(listening: false) else { return 0 }
        defer { close(fd) }
        return localPort(of: fd)
    }

    /// A socket bound to an ephemeral port on 127.0.0.1, listening with `backlog` when `listening`.
    /// The caller owns (and closes) the descriptor.
    public static func bind(listening: Bool = true, backlog: Int32 = 16) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestingError("socket: \(String(cString: strerror(errno)))") }
        var address = loopback(port: 0)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, !listening || listen(fd, backlog) == 0 else {
            let reason = String(cString: strerror(errno))
            close(fd)
            throw TestingError("bind/listen on 127.0.0.1: \(reason)")
        }
        return fd
    }

    /// The local port a socket is bound to.
    public static func localPort(of fd: Int32) -> Int {
        var address = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Starts a TCP connection to 127.0.0.1:`port` on a new socket; `blocking` false returns at once
    /// (the connection completes in the background). The caller owns the descriptor.
    public static func connect(to port: Int, blocking: Bool = true) -> (fd: Int32, connected: Bool) {
        var flags = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        if !blocking { flags |= Int32(SOCK_NONBLOCK.rawValue) }
        let fd = socket(AF_INET, flags, 0)
        var address = loopback(port: port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        return (fd, result == 0)
    }

    /// `count` different unused ports (``unused()`` alone may hand out the same port twice).
    public static func unused(count: Int) -> [Int] {
        var ports: [Int] = []
        while ports.count < count {
            let port = unused()
            if !ports.contains(port) { ports.append(port) }
        }
        return ports
    }

    /// Polls with plain TCP connects until every port accepts, `isAlive` turns false, or `timeout`
    /// passes. With `owner`, a port counts only once that process holds its listening socket
    /// (another may have taken a port meant for it: see `LoopbackPort+Owner.swift`).
    ///
    /// A peer that cannot bind exits, which `isAlive` reports at once; the timeout is for a peer
    /// that starts slowly while a whole test run starts beside it (seconds under the sanitizers).
    public static func waitUntilListening(
        _ ports: [Int],
        by owner: pid_t? = nil,
        timeout: Duration = .seconds(30),
        isAlive: () -> Bool = { true }
    ) async -> Bool {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            guard isAlive() else { return false }
            // A connect first: it fails at once while nothing listens, and reading /proc (every
            // socket of the machine) is worth it only once something does.
            let ready = ports.allSatisfy { port in
                let (fd, connected) = connect(to: port)
                close(fd)
                guard connected else { return false }
                if let owner { return isListening(on: port, by: owner) }
                return true
            }
            if ready { return true }
            try? await Task.sleep(for: .milliseconds(25))
        }
        return false
    }

    private static func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        return address
    }
}
