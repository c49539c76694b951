import FoundationEssentials
import Glibc

/// Cookies kept per RFC 6265, in memory (thread-safe), with curl's Netscape cookie files to load
/// and save.
///
/// The store keeps RFC 6265's rules where Foundation's `HTTPCookieStorage` on Linux does not: a
/// `Domain` of another site or of a public suffix is refused, Secure cookies go over https only,
/// `Max-Age=0` removes a cookie, and path `/docs` does not match `/docsx`. A cookie is never sent
/// to a site that did not set it (or a parent domain that is not a public suffix).
public final class CookieStore: Sendable {
    /// A store shared by sessions that do not bring their own (the `HTTPCookieStorage.shared` analogue).
    public static let shared = CookieStore()

    /// The most cookies per domain and in all; the least recently created go first.
    public static let maximumPerDomain = 50
    /// The most cookies the store keeps in all; the least recently created go first.
    public static let maximumTotal = 3_000

    private let cookies = LockedValue<[String: Cookie]>([:])
    /// Told of every change, in the order the changes were made (under the store's lock, so it
    /// must only take note): how a persistent storage follows the store.
    private let changeHandler: (@Sendable (Change) -> Void)?

    /// An empty store of its own, kept in memory for as long as it exists.
    public init() { changeHandler = nil }

    /// What one change did: the cookies it stored (new or replacing) and those it removed
    /// (deleted, replaced under another identity, expired or evicted). A persistent copy applies
    /// `removed`, then `stored`.
    package struct Change: Sendable {
        package var stored: [Cookie]
        package var removed: [Cookie]
    }

    /// A store that reports each change to `changeHandler` (called with the store's lock held:
    /// it records the change and returns, and never calls back into the store).
    package init(reportingChangesTo changeHandler: @escaping @Sendable (Change) -> Void) {
        self.changeHandler = changeHandler
    }

    /// Adds cookies kept elsewhere (a persistent copy being read back) under the store's rules,
    /// without reporting them as changes; returns how many the rules refused.
    package func restore(_ restored: [Cookie]) -> Int {
        let now = Date()
        var accepted: [Cookie] = []
        for var cookie in restored where !cookie.isExpired(at: now) {
            cookie.domain = CookieRules.canonicalHost(cookie.domain)
            if CookieRules.refusal(cookie, from: nil) == nil { accepted.append(cookie) }
        }
        cookies.withLock { cookies in
            for cookie in accepted { cookies[cookie.key] = cookie }
            Self.evict(&cookies, domains: Set(accepted.map(\.domain)), now: now)
        }
        return restored.count - accepted.count
    }

    /// Every cookie not yet expired.
    public var allCookies: [Cookie] {
        let now = Date()
        return cookies.withLock { Array($0.values) }.filter { !$0.isExpired(at: now) }.sorted(by: Self.order)
    }

    /// The cookies to send with a request to `url`, longest path first (RFC 6265 section 5.4).
    public func cookies(for url: URL) -> [Cookie] {
        // Every request asks: an empty store answers without taking the URL apart.
        guard !cookies.withLock({ $0.isEmpty }), let target = CookieRules.Target(url) else { return [] }
        let now = Date()
        return cookies.withLock { cookies in cookies.values.filter { $0.matches(target, at: now) } }
            .sorted(by: Self.order)
    }

    /// The `Cookie` field value for `url`, or nil when no cookie goes there.
    public func cookieHeader(for url: URL) -> String? {
        let matching = cookies(for: url)
        guard !matching.isEmpty else { return nil }
        return matching.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// Stores what a response's `Set-Cookie` fields set for `url`; returns the cookies accepted.
    @discardableResult
    public func store(setCookieFields fields: [String], for url: URL) -> [Cookie] {
        guard !fields.isEmpty else { return [] }  // most responses: nothing to do, no clock read
        let now = Date()
        let parsed = fields.compactMap { SetCookieParser.cookie(from: $0, for: url, at: now) }
        set(contentsOf: parsed)
        return parsed.filter { !$0.isExpired(at: now) }
    }

    /// Adds or replaces `cookie` (keeping the creation time of the one it replaces); an expired
    /// cookie removes its namesake. The store's rules apply as they do to `Set-Cookie`: a cookie
    /// they refuse (a domain cookie for a public suffix, one `url` may not set, ...) is not
    /// stored.
    /// - Parameters:
    ///   - cookie: the cookie to store.
    ///   - url: the page setting it, when there is one: the cookie must belong to its host, and
    ///     may be Secure only over https.
    /// - Returns: false when the cookie was refused (``refusal(of:from:)`` says why).
    @discardableResult
    public func set(_ cookie: Cookie, from url: URL? = nil) -> Bool {
        var cookie = cookie
        cookie.domain = CookieRules.canonicalHost(cookie.domain)  // the form hosts are compared in
        guard CookieRules.refusal(cookie, from: url) == nil else { return false }
        set(contentsOf: [cookie])
        return true
    }

    /// Why ``set(_:from:)`` would refuse `cookie`; nil when it would store it.
    public func refusal(of cookie: Cookie, from url: URL? = nil) -> String? {
        CookieRules.refusal(cookie, from: url)
    }

    /// Adds or replaces every cookie of `added` in order, with one eviction pass at the end (a
    /// cookie file's lines: linear in their number, not quadratic). The caller checked them.
    func set(contentsOf added: [Cookie]) {
        guard !added.isEmpty else { return }
        let now = Date()
        cookies.withLock { cookies in
            let before = changeHandler == nil ? [:] : cookies
            for cookie in added {
                let old = cookies.removeValue(forKey: cookie.key)
                guard !cookie.isExpired(at: now) else { continue }
                var stored = cookie
                if let old { stored.created = old.created }
                cookies[cookie.key] = stored
            }
            Self.evict(&cookies, domains: Set(added.map(\.domain)), now: now)
            guard let changeHandler else { return }
            let removed = before.values.filter { cookies[$0.key] == nil }
            let stored = Set(added.map(\.key)).compactMap { cookies[$0] }
            if !removed.isEmpty || !stored.isEmpty { changeHandler(Change(stored: stored, removed: removed)) }
        }
    }

    /// Removes the cookies `predicate` selects (all of them by default).
    public func remove(where predicate: (Cookie) -> Bool = { _ in true }) {
        cookies.withLock { cookies in
            let removed = cookies.values.filter(predicate)
            guard !removed.isEmpty else { return }
            for cookie in removed { cookies.removeValue(forKey: cookie.key) }
            changeHandler?(Change(stored: [], removed: removed))
        }
    }

    private static func order(_ a: Cookie, _ b: Cookie) -> Bool {
        if a.path.count != b.path.count { return a.path.count > b.path.count }
        if a.created != b.created { return a.created < b.created }
        return a.name < b.name
    }

    /// Drops expired cookies, then the oldest of each of `domains` past ``maximumPerDomain``, then
    /// the oldest of all past ``maximumTotal``.
    private static func evict(_ cookies: inout [String: Cookie], domains: Set<String>, now: Date) {
        cookies = cookies.filter { !$0.value.isExpired(at: now) }
        let crowded = Dictionary(grouping: cookies.values.filter { domains.contains($0.domain) }, by: \.domain)
        for (_, sameDomain) in crowded where sameDomain.count > maximumPerDomain {
            for cookie in sameDomain.sorted(by: { $0.created < $1.created }).prefix(sameDomain.count - maximumPerDomain)
            {
                cookies.removeValue(forKey: cookie.key)
            }
        }
        if cookies.count > maximumTotal {
            for cookie in cookies.values.sorted(by: { $0.created < $1.created }).prefix(cookies.count - maximumTotal) {
                cookies.removeValue(forKey: cookie.key)
            }
        }
    }
}
