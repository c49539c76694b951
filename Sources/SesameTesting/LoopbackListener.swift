import FoundationEssentials
import Glibc

/// A listening TCP socket on 127.0.0.1 with a port the kernel picks, for the test servers that
/// handle their sockets themselves.
enum LoopbackListener {
    /// The listening descriptor and its address (port in network order).
    static func open(backlog: Int32) throws -> (descriptor: Int32, address: sockaddr_in) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestingError("socket(): \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, backlog) == 0 else {
            Glibc.close(fd)
            throw TestingError("bind/listen: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return (fd, address)
    }
}
