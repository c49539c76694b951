import FoundationEssentials
import Glibc

/// The origin and origin-form request target of the URL a session requested last.
///
/// Taking a URL apart through Foundation's accessors (scheme, host, port, path, query) costs
/// about a microsecond, each time, while comparing two URLs costs nanoseconds; sessions mostly
/// request the same URLs over and over.
final class URLPartsCache: Sendable {
    struct Parts: Sendable {
        /// Nil when the URL is not an absolute http or https URL.
        let origin: Origin?
        /// Path and query, as sent to an origin.
        let target: String
    }

    private let last = LockedValue<(url: URL, parts: Parts)?>(nil)

    func parts(of url: URL) -> Parts {
        let cached = last.withLock { last -> Parts? in
            guard let last, last.url == url else { return nil }
            return last.parts
        }
        if let cached { return cached }
        let parts = Parts(origin: Origin(url), target: RequestHead.target(of: url))
        last.withLock { $0 = (url, parts) }
        return parts
    }
}
