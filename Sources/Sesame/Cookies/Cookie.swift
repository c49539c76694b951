import FoundationEssentials
import Glibc

/// One cookie as stored (RFC 6265 section 5.3): set by a server's `Set-Cookie`, sent back in
/// `Cookie` to the hosts and paths it covers.
public struct Cookie: Hashable, Sendable, CustomStringConvertible {
    /// The cookie's name, as the server set it.
    public var name: String
    /// The cookie's value, as the server set it (not decoded).
    public var value: String
    /// The host (``isHostOnly``) or domain the cookie belongs to, lowercased, without a leading dot.
    public var domain: String
    /// True when the cookie goes back to exactly ``domain``, not to its subdomains (no `Domain`
    /// attribute was given).
    public var isHostOnly: Bool
    /// The path the cookie is sent for, and below it (RFC 6265 section 5.1.4).
    public var path: String
    /// When it expires; nil for a session cookie (kept until the store is dropped).
    public var expires: Date?
    /// Sent only over https.
    public var isSecure: Bool
    /// Hidden from scripts (`HttpOnly`); Sesame sends it like any other cookie.
    public var isHTTPOnly: Bool
    /// The `SameSite` attribute as given ("Strict", "Lax", "None"), if any.
    public var sameSite: String?
    /// When the cookie was first stored (kept when it is replaced): orders cookies with equal paths.
    public var created: Date

    /// A cookie with these fields, as given: nothing is checked against the rules of RFC 6265
    /// (``CookieStore`` checks them when it stores a cookie from a response).
    public init(
        name: String,
        value: String,
        domain: String,
        isHostOnly: Bool = true,
        path: String = "/",
        expires: Date? = nil,
        isSecure: Bool = false,
        isHTTPOnly: Bool = false,
        sameSite: String? = nil,
        created: Date = Date()
    ) {
        self.name = name
        self.value = value
        self.domain = domain.lowercased()
        self.isHostOnly = isHostOnly
        self.path = path
        self.expires = expires
        self.isSecure = isSecure
        self.isHTTPOnly = isHTTPOnly
        self.sameSite = sameSite
        self.created = created
    }

    /// Whether the cookie has expired at `date`.
    public func isExpired(at date: Date = Date()) -> Bool { expires.map { $0 <= date } ?? false }

    /// Whether the cookie goes with a request to `url` (host, path, scheme), at `date`.
    public func matches(_ url: URL, at date: Date = Date()) -> Bool {
        guard let target = CookieRules.Target(url) else { return false }
        return matches(target, at: date)
    }

    /// The same for a URL already taken apart (once per request, not once per cookie).
    func matches(_ target: CookieRules.Target, at date: Date) -> Bool {
        if isExpired(at: date) { return false }
        if isSecure && !target.isSecure { return false }
        let domainOK =
            isHostOnly ? target.host == domain : CookieRules.domainMatches(host: target.host, domain: domain)
        return domainOK && CookieRules.pathMatches(target.path, cookiePath: path)
    }

    /// Identity in the store: a new cookie with the same name, domain, host-only flag and path
    /// replaces the old one.
    var key: String { "\(name)\u{0}\(domain)\u{0}\(isHostOnly)\u{0}\(path)" }

    public var description: String {
        "\(name)=… (\(isHostOnly ? "" : ".")\(domain)\(path)\(isSecure ? ", secure" : "")"
            + "\(expires.map { ", expires \($0.formatted(.iso8601))" } ?? ", session"))"
    }
}
