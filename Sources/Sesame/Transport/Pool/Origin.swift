import FoundationEssentials
import Glibc

/// Scheme, host and port of a URL, normalized.
struct Origin: Hashable, Sendable, CustomStringConvertible {
    let scheme: String
    let host: String
    let port: Int
    /// How connections to the origin are made. Part of the pool key, so that connections through
    /// different proxies (or none) are never shared; `Origin(url)` is always `.direct`.
    var route: ProxyRoute = .direct
    /// The Host header value: the port only when it is not the scheme's default. Kept rather
    /// than recomputed: every request sends it.
    let hostHeader: String

    init(scheme: String, host: String, port: Int) {
        self.scheme = scheme
        self.host = host
        self.port = port
        self.hostHeader = Self.hostHeader(scheme: scheme, host: host, port: port)
    }

    init?(_ url: URL) {
        guard let given = url.scheme else { return nil }
        // Computed for every request: no case mapping or percent-decoding unless needed.
        let scheme: String
        if given.caseInsensitiveEquals("https") {
            scheme = "https"
        } else if given.caseInsensitiveEquals("http") {
            scheme = "http"
        } else {
            return nil
        }
        guard let encoded = url.host(percentEncoded: true), !encoded.isEmpty else { return nil }
        let host: String
        if encoded.utf8.contains(UInt8(ascii: "%")) {
            guard let decoded = url.host(percentEncoded: false), !decoded.isEmpty else { return nil }
            host = decoded.lowercased()
        } else {
            host = encoded.utf8.contains(where: { (0x41...0x5A).contains($0) }) ? encoded.lowercased() : encoded
        }
        self.init(scheme: scheme, host: host, port: url.port ?? (scheme == "https" ? 443 : 80))
    }

    var isTLS: Bool { scheme == "https" }

    private static func hostHeader(scheme: String, host: String, port: Int) -> String {
        let name = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        return port == (scheme == "https" ? 443 : 80) ? name : "\(name):\(port)"
    }

    // `hostHeader` follows from the others.
    static func == (lhs: Origin, rhs: Origin) -> Bool {
        lhs.port == rhs.port && lhs.host == rhs.host && lhs.scheme == rhs.scheme && lhs.route == rhs.route
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(scheme)
        hasher.combine(host)
        hasher.combine(port)
        hasher.combine(route)
    }

    var description: String { "\(scheme)://\(hostHeader)" }
}
