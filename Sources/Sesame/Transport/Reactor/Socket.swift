import FoundationEssentials
import Glibc

/// Owns one non-blocking TCP socket descriptor. Loop-confined once connected.
final class Socket {
    let fd: Int32
    private(set) var isClosed = false

    init(takingOwnership fd: Int32) { self.fd = fd }

    /// A non-blocking, close-on-exec TCP socket with Nagle off.
    static func makeTCP(family: Int32) throws -> Socket {
        let fd = socket(
            family,
            Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue),
            0
        )
        guard fd >= 0 else { throw SesameError(.ioError, "socket(): \(errnoText())") }
        var one: Int32 = 1
        _ = setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        return Socket(takingOwnership: fd)
    }

    enum IOResult: Equatable {
        case done(Int)
        case wouldBlock
        case endOfFile
        case failed(Int32)
    }

    func read(into buffer: UnsafeMutableRawBufferPointer) -> IOResult {
        while true {
            let count = Glibc.read(fd, buffer.baseAddress, buffer.count)
            if count > 0 { return .done(count) }
            if count == 0 { return .endOfFile }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return .wouldBlock }
            return .failed(errno)
        }
    }

    func write(_ buffer: UnsafeRawBufferPointer) -> IOResult {
        while true {
            let count = send(fd, buffer.baseAddress, buffer.count, Int32(MSG_NOSIGNAL))
            if count >= 0 { return .done(count) }
            if errno == EINTR { continue }
            if errno == EAGAIN || errno == EWOULDBLOCK { return .wouldBlock }
            return .failed(errno)
        }
    }

    /// The pending error of a non-blocking connect (0 when connected).
    var pendingError: Int32 {
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        _ = getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        return error
    }

    func close() {
        guard !isClosed else { return }
        isClosed = true
        Glibc.close(fd)
    }

    deinit { close() }
}

func errnoText(_ code: Int32 = errno) -> String { String(cString: strerror(code)) }
