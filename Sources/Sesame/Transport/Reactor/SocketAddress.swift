import FoundationEssentials
import Glibc

/// An IPv4 or IPv6 socket address.
struct SocketAddress: Sendable, CustomStringConvertible {
    private let storage: sockaddr_storage
    let length: socklen_t

    init?(copying address: UnsafePointer<sockaddr>, length: socklen_t) {
        guard length <= MemoryLayout<sockaddr_storage>.size else { return nil }
        var storage = sockaddr_storage()
        withUnsafeMutableBytes(of: &storage) { target in
            target.copyMemory(from: UnsafeRawBufferPointer(start: address, count: Int(length)))
        }
        self.storage = storage
        self.length = length
    }

    var family: Int32 { Int32(storage.ss_family) }

    func withSockAddr<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        withUnsafeBytes(of: storage) { raw in
            body(raw.baseAddress!.assumingMemoryBound(to: sockaddr.self), length)  // safe: non-empty struct
        }
    }

    /// "127.0.0.1:443" or "[::1]:443".
    var description: String {
        var host = [CChar](repeating: 0, count: Int(NI_MAXHOST))
        var service = [CChar](repeating: 0, count: Int(NI_MAXSERV))
        let result = withSockAddr { address, length in
            getnameinfo(
                address,
                length,
                &host,
                socklen_t(host.count),
                &service,
                socklen_t(service.count),
                NI_NUMERICHOST | NI_NUMERICSERV
            )
        }
        guard result == 0 else { return "unknown address" }
        let hostText = stringFromCBuffer(host)
        let serviceText = stringFromCBuffer(service)
        return family == AF_INET6 ? "[\(hostText)]:\(serviceText)" : "\(hostText):\(serviceText)"
    }
}
