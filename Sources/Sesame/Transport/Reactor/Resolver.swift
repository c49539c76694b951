import Dispatch
import Foundation

/// Name resolution with `getaddrinfo`, off the event loop and off the Swift concurrency pool
/// (it blocks), on a dispatch queue. IP literals are answered at once without a lookup.
enum Resolver {
    private static let queue = DispatchQueue(label: "sesame.resolver", attributes: .concurrent)

    /// The TCP addresses for `host`, IPv6 and IPv4 in the order the system prefers.
    /// - Throws: ``SesameError/Code/nameResolutionFailed`` naming the host.
    static func resolve(host: String, port: Int) async throws -> [SocketAddress] {
        let bare = IPAddressText.unbracketed(host)
        if IPAddressText.parse(bare) != nil {
            return try lookup(host: bare, port: port, numeric: true)
        }
        return try await withCheckedThrowingContinuation { continuation in
            queue.async {
                continuation.resume(with: Result { try lookup(host: bare, port: port, numeric: false) })
            }
        }
    }

    private static func lookup(host: String, port: Int, numeric: Bool) throws -> [SocketAddress] {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        hints.ai_protocol = Int32(IPPROTO_TCP)
        // Literals are explicit, so AI_ADDRCONFIG (which can refuse ::1) applies to names only.
        hints.ai_flags = numeric ? AI_NUMERICHOST : AI_ADDRCONFIG
        var result: UnsafeMutablePointer<addrinfo>? = nil
        let status = getaddrinfo(host, String(port), &hints, &result)
        guard status == 0 else {
            let reason = String(cString: gai_strerror(status))
            throw SesameError(.nameResolutionFailed, "'\(host)': \(reason)")
        }
        defer { freeaddrinfo(result) }
        var addresses: [SocketAddress] = []
        var cursor = result
        while let info = cursor {
            if let address = info.pointee.ai_addr,
                let socketAddress = SocketAddress(copying: address, length: info.pointee.ai_addrlen)
            {
                addresses.append(socketAddress)
            }
            cursor = info.pointee.ai_next
        }
        guard !addresses.isEmpty else { throw SesameError(.nameResolutionFailed, "'\(host)': no addresses") }
        return addresses
    }
}
