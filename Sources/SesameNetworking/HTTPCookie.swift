import Foundation
import Sesame

/// The keys of `HTTPCookie(properties:)`.
public struct HTTPCookiePropertyKey: RawRepresentable, Hashable, Sendable {
    public let rawValue: String
    public init(rawValue: String) { self.rawValue = rawValue }
    public init(_ rawValue: String) { self.rawValue = rawValue }

    public static let name = HTTPCookiePropertyKey("Name")
    public static let value = HTTPCookiePropertyKey("Value")
    public static let domain = HTTPCookiePropertyKey("Domain")
    public static let path = HTTPCookiePropertyKey("Path")
    public static let secure = HTTPCookiePropertyKey("Secure")
    public static let expires = HTTPCookiePropertyKey("Expires")
    public static let maximumAge = HTTPCookiePropertyKey("Max-Age")
    public static let originURL = HTTPCookiePropertyKey("OriginURL")
    public static let version = HTTPCookiePropertyKey("Version")
    public static let discard = HTTPCookiePropertyKey("Discard")
    public static let sameSitePolicy = HTTPCookiePropertyKey("SameSite")
}

/// An HTTP cookie (`HTTPCookie`), over Sesame's `Cookie`.
open class HTTPCookie: NSObject, @unchecked Sendable {
    // @unchecked: immutable.
    /// Which cookies a storage accepts.
    public enum AcceptPolicy: UInt, Sendable {
        case always = 0
        case never = 1
        case onlyFromMainDocumentDomain = 2
    }

    let cookie: Cookie

    init(_ cookie: Cookie) { self.cookie = cookie }

    /// A cookie from Apple's property keys (name, value, and a domain or an origin URL are needed).
    public init?(properties: [HTTPCookiePropertyKey: Any]) {
        func string(_ key: HTTPCookiePropertyKey) -> String? {
            (properties[key] as? String) ?? (properties[key] as? URL)?.absoluteString
        }
        guard let name = string(.name), let value = string(.value) else { return nil }
        let origin = (properties[.originURL] as? URL) ?? string(.originURL).flatMap(URL.init(string:))
        guard let domain = string(.domain) ?? origin?.host else { return nil }
        var expires = properties[.expires] as? Date
        if let age = string(.maximumAge).flatMap(TimeInterval.init) { expires = Date(timeIntervalSinceNow: age) }
        let secure = properties[.secure] != nil && string(.secure)?.uppercased() != "FALSE"
        cookie = Cookie(
            name: name,
            value: value,
            domain: domain.hasPrefix(".") ? String(domain.dropFirst()) : domain,
            isHostOnly: !domain.hasPrefix("."),
            path: string(.path) ?? "/",
            expires: expires,
            isSecure: secure,
            sameSite: string(.sameSitePolicy)
        )
    }

    public var name: String { cookie.name }
    public var value: String { cookie.value }
    /// As Apple's: a leading dot for a cookie that also goes to subdomains.
    public var domain: String { cookie.isHostOnly ? cookie.domain : "." + cookie.domain }
    public var path: String { cookie.path }
    public var expiresDate: Date? { cookie.expires }
    public var isSessionOnly: Bool { cookie.expires == nil }
    public var isSecure: Bool { cookie.isSecure }
    public var isHTTPOnly: Bool { cookie.isHTTPOnly }

    /// The cookies a response's `Set-Cookie` fields set for `url`.
    open class func cookies(withResponseHeaderFields headerFields: [String: String], for url: URL) -> [HTTPCookie] {
        let store = CookieStore()
        let fields = headerFields.filter { $0.key.caseInsensitiveCompare("Set-Cookie") == .orderedSame }.map(\.value)
        return store.store(setCookieFields: fields, for: url).map(HTTPCookie.init)
    }

    /// The `Cookie` field for `cookies`.
    open class func requestHeaderFields(with cookies: [HTTPCookie]) -> [String: String] {
        guard !cookies.isEmpty else { return [:] }
        return ["Cookie": cookies.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")]
    }

    public override func isEqual(_ object: Any?) -> Bool {
        guard let other = object as? HTTPCookie else { return false }
        return other.name == name && other.domain == domain && other.path == path
    }
    public override var hash: Int { name.hashValue ^ cookie.domain.hashValue }
    public override var description: String { cookie.description }
}

/// Where cookies are kept (`HTTPCookieStorage`), over Sesame's `CookieStore` (RFC 6265 rules,
/// public suffixes refused).
open class HTTPCookieStorage: NSObject, @unchecked Sendable {
    // @unchecked: `store` is Sendable; `cookieAcceptPolicy` is set as on Apple's, before use.
    let store: CookieStore
    open var cookieAcceptPolicy: HTTPCookie.AcceptPolicy = .always

    /// The process-wide storage (Sesame's `CookieStore.shared`).
    public static let shared = HTTPCookieStorage(CookieStore.shared)

    public init(_ store: CookieStore) { self.store = store }

    /// A storage of its own, in memory.
    public override convenience init() { self.init(CookieStore()) }

    open var cookies: [HTTPCookie]? { store.allCookies.map(HTTPCookie.init) }

    open func cookies(for url: URL) -> [HTTPCookie]? { store.cookies(for: url).map(HTTPCookie.init) }

    /// Stores `cookie` unless Sesame's cookie rules refuse it (a domain cookie for a public
    /// suffix, a malformed one): Foundation stores anything here, and a `.com` cookie would then go
    /// to every `.com` site. A difference from Apple's that is a security rule.
    open func setCookie(_ cookie: HTTPCookie) {
        guard cookieAcceptPolicy != .never else { return }
        store.set(cookie.cookie)
    }

    /// Stores the cookies `url` may set (each must belong to its host), as responses set them.
    open func setCookies(_ cookies: [HTTPCookie], for url: URL?, mainDocumentURL: URL?) {
        guard cookieAcceptPolicy != .never else { return }
        if cookieAcceptPolicy == .onlyFromMainDocumentDomain, let url, let main = mainDocumentURL?.host?.lowercased(),
            let host = url.host?.lowercased(), host != main, !host.hasSuffix("." + main)
        {
            return
        }
        for cookie in cookies { store.set(cookie.cookie, from: url) }
    }

    open func deleteCookie(_ cookie: HTTPCookie) {
        let target = cookie.cookie
        store.remove { $0.name == target.name && $0.domain == target.domain && $0.path == target.path }
    }

    open func removeCookies(since date: Date) { store.remove { $0.created >= date } }
}
