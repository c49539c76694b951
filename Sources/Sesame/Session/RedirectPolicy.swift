import Foundation

/// What a redirect response turns the request into (RFC 9110 section 15.4), with credentials
/// removed whenever the origin changes.
enum RedirectPolicy {
    static let statuses: Set<Int> = [301, 302, 303, 307, 308]

    /// Header fields that belong to the origin they were set for and must not follow a redirect to
    /// another: the credentials, and a caller's own `Host` (which would send the request to the
    /// new server under the old server's name).
    static let originBoundHeaders = ["Authorization", "Cookie", "Proxy-Authorization", "Host"]

    /// The request to send for `response`, or nil when it is not a redirect that can be followed
    /// (no Location, an unsupported scheme, or a body that cannot be sent again).
    static func nextRequest(after response: HTTPResponse, for request: HTTPRequest) -> HTTPRequest? {
        guard statuses.contains(response.status), let location = response.headers.first("Location"),
            let target = URL(string: location, relativeTo: request.url)?.absoluteURL,
            let scheme = target.scheme?.lowercased(), scheme == "http" || scheme == "https", target.host != nil
        else { return nil }
        var next = request
        next.url = target
        let changesToGET =
            response.status == 303
            ? request.method != "HEAD" : (response.status == 301 || response.status == 302) && request.method == "POST"
        if changesToGET {
            next.method = "GET"
            next.body = nil
            for name in ["Content-Type", "Content-Length", "Content-Encoding", "Transfer-Encoding"] {
                next.headers.remove(name: name)
            }
        } else if let body = request.body, !body.isReplayable {
            return nil
        }
        if !sameOrigin(request.url, target) {
            for name in originBoundHeaders { next.headers.remove(name: name) }
        }
        return next
    }

    /// Scheme, host and port all equal (default ports filled in).
    static func sameOrigin(_ first: URL, _ second: URL) -> Bool {
        guard let a = Origin(first), let b = Origin(second) else { return false }
        return a == b
    }
}

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

extension URL {
    /// The URL for messages: any user name and password removed.
    var redactedDescription: String {
        guard user != nil || password != nil, var components = URLComponents(url: self, resolvingAgainstBaseURL: true)
        else { return absoluteString }
        components.user = nil
        components.password = nil
        return components.string ?? "\(scheme ?? "?")://(redacted)"
    }
}
