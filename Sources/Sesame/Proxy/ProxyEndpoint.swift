import FoundationEssentials
import Glibc

/// A proxy to send requests through: `http://` (plain) or `https://` (TLS to the proxy itself).
public struct ProxyEndpoint: Hashable, Sendable, CustomStringConvertible {
    /// "http" or "https": how Sesame talks to the proxy.
    public let scheme: String
    /// The proxy's host (lowercased).
    public let host: String
    /// The proxy's port.
    public let port: Int

    /// Parses curl's proxy syntax: `[scheme://][user[:password]@]host[:port]`. Without a scheme the
    /// proxy is `http`; without a port it is 1080 for `http` (curl's default) and 443 for `https`.
    /// User and password in the URL are returned as the proxy's credential.
    /// - Throws: ``SesameError/Code/invalidArgument`` naming the problem (SOCKS is not supported).
    public static func parse(_ text: String) throws -> (endpoint: ProxyEndpoint, credential: Credential?) {
        let trimmed = text.trimmingWhitespace()
        let withScheme = trimmed.contains("://") ? trimmed : "http://" + trimmed
        guard let components = URLComponents(string: withScheme), let scheme = components.scheme?.lowercased(),
            let host = components.host, !host.isEmpty
        else { throw SesameError(.invalidArgument, "'\(redacted(text))' is not a proxy URL") }
        guard scheme == "http" || scheme == "https" else {
            throw SesameError(
                .invalidArgument,
                "proxy scheme '\(scheme)' is not supported (use an http:// or https:// proxy)"
            )
        }
        if let port = components.port, !(1...65535).contains(port) {
            throw SesameError(.invalidArgument, "the proxy port \(port) is out of range")
        }
        let path = components.percentEncodedPath
        guard path.isEmpty || path == "/" else {
            throw SesameError(.invalidArgument, "the proxy URL '\(redacted(text))' must not have a path")
        }
        let name = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        let endpoint = ProxyEndpoint(
            scheme: scheme,
            host: name.lowercased(),
            port: components.port ?? (scheme == "https" ? 443 : 1080)
        )
        var credential: Credential? = nil
        if let user = components.user?.percentDecoded(), !user.isEmpty {
            credential = Credential(
                user: user,
                password: components.password?.percentDecoded() ?? "",
                persistence: .forSession
            )
        }
        return (endpoint, credential)
    }

    /// A proxy at `host` and `port`, spoken to with `scheme` (`http` or `https`).
    public init(scheme: String, host: String, port: Int) {
        self.scheme = scheme.lowercased()
        self.host = host.lowercased()
        self.port = port
    }

    /// True for an HTTPS proxy.
    public var isTLS: Bool { scheme == "https" }

    /// The proxy as an origin (for its protection spaces and messages).
    var origin: Origin { Origin(scheme: scheme, host: host, port: port) }

    public var description: String {
        let name = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        return "\(scheme)://\(name):\(port)"
    }

    private static func redacted(_ text: String) -> String {
        guard let at = text.lastIndex(of: "@") else { return text }
        let start = text.firstRange(of: "://")?.upperBound ?? text.startIndex
        return String(text[..<start]) + "(credentials)" + String(text[at...])
    }
}
