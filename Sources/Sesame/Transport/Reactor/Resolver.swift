import FoundationEssentials
import Glibc
import Synchronization

/// Name resolution with `getaddrinfo`, off the event loop and off the Swift concurrency pool
/// (it blocks), on ``BlockingWorkThreads``, through ``NameCache`` when the caller accepts cached
/// answers. IP literals are answered at once without a lookup.
enum Resolver {

    /// The TCP addresses for `host`, IPv6 and IPv4 in the order the system prefers.
    /// - Parameters:
    ///   - timeout: how long to wait for the answer; `getaddrinfo` cannot be stopped, so a lookup
    ///     still running then finishes on its own and its answer is dropped (or kept in `cache`).
    ///   - cacheLifetime: how old an answer from `cache` may be; the caller then also shares the
    ///     lookup in flight for the same name. Nil or zero: a lookup of the caller's own.
    /// - Throws: ``SesameError/Code/nameResolutionFailed`` naming the host;
    ///   ``SesameError/Code/connectTimeout`` when no answer came within `timeout`.
    static func resolve(
        host: String,
        port: Int,
        timeout: Duration = .seconds(60),
        cacheLifetime: Duration? = nil,
        cache: NameCache = .shared,
        on loop: EventLoop = .shared,
        lookingUpWith lookUp: @escaping @Sendable (String, Int) throws -> [SocketAddress] = lookup
    ) async throws -> [SocketAddress] {
        let bare = IPAddressText.unbracketed(host)
        if IPAddressText.parse(bare) != nil {
            return try lookup(host: bare, port: port, numeric: true)
        }
        let lifetime = cacheLifetime.flatMap { $0 > .zero ? $0 : nil }
        if let lifetime, let cached = cache.answer(host: bare, port: port, maxAge: lifetime) { return cached }
        let answered = Atomic<Bool>(false)
        return try await withCheckedThrowingContinuation { continuation in
            // Whichever comes first, the answer or the time limit, resumes the caller.
            let resume: @Sendable (Result<[SocketAddress], any Error>) -> Void = { result in
                if !answered.exchange(true, ordering: .acquiringAndReleasing) { continuation.resume(with: result) }
            }
            let timer = LoopTimer(on: loop, at: loop.now + timeout) {
                resume(.failure(SesameError(.connectTimeout, "'\(host)' was not resolved within \(timeout)")))
            }
            let completion: NameCache.Completion = { result in
                timer.cancel()
                resume(result)
            }
            guard let lifetime else {
                BlockingWorkThreads.shared.submit { completion(Result { try lookUp(bare, port) }) }
                return
            }
            switch cache.join(host: bare, port: port, maxAge: lifetime, completion: completion) {
            case .answered(let addresses):
                completion(.success(addresses))
            case .joined:
                break
            case .lookUp(let id):
                BlockingWorkThreads.shared.submit { cache.finish(id, with: Result { try lookUp(bare, port) }) }
            }
        }
    }

    /// `getaddrinfo` for a name.
    static func lookup(_ host: String, _ port: Int) throws -> [SocketAddress] {
        try lookup(host: host, port: port, numeric: false)
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
