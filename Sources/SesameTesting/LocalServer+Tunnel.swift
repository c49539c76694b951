import FoundationEssentials
import Glibc

extension LocalServer {
    /// Copies bytes between `stream` and a new connection to `127.0.0.1:port` on this thread
    /// (one thread, because an `SSL` must not be read and written from two at once).
    static func relay(_ stream: ServerStream, first: [UInt8], toPort port: Int) {
        let upstream = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard upstream >= 0 else { return }
        defer { close(upstream) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(upstream, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { return }
        if !first.isEmpty, !ServerStream.plain(upstream).write(first) { return }
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            var fds = [
                pollfd(fd: stream.descriptor, events: Int16(POLLIN), revents: 0),
                pollfd(fd: upstream, events: Int16(POLLIN), revents: 0),
            ]
            if !stream.hasBufferedBytes {
                guard poll(&fds, 2, 30_000) > 0 else { return }
            } else {
                fds[0].revents = Int16(POLLIN)
            }
            if fds[0].revents != 0 {
                guard case .bytes(let count) = stream.read(into: &buffer),
                    ServerStream.plain(upstream).write(Array(buffer[0..<count]))
                else { return }
            }
            if fds[1].revents != 0 {
                let count = buffer.withUnsafeMutableBytes { recv(upstream, $0.baseAddress, $0.count, 0) }
                guard count > 0, stream.write(Array(buffer[0..<count])) else { return }
            }
        }
    }
}
