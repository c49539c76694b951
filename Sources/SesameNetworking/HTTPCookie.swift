import Foundation
import Sesame

// `HTTPCookie` is FoundationNetworking's (its properties, its `Set-Cookie` parsing as
// Foundation parses it); `HTTPCookieStorage` is Sesame's, over its cookie store and rules.

extension HTTPCookie {
    /// The cookie Sesame stores and sends.
    var sesameCookie: Cookie {
        Cookie(
            name: name,
            value: value,
            domain: domain.hasPrefix(".") ? String(domain.dropFirst()) : domain,
            isHostOnly: !domain.hasPrefix("."),
            path: path.isEmpty ? "/" : path,
            expires: expiresDate,
            isSecure: isSecure,
            isHTTPOnly: isHTTPOnly,
            sameSite: properties?[HTTPCookiePropertyKey("SameSite")] as? String
        )
    }

    /// Sesame's cookie under Foundation's properties (a leading dot for a domain cookie).
    static func make(_ cookie: Cookie) -> HTTPCookie? {
        var properties: [HTTPCookiePropertyKey: Any] = [
            .name: cookie.name, .value: cookie.value, .path: cookie.path,
            .domain: cookie.isHostOnly ? cookie.domain : "." + cookie.domain,
        ]
        if let expires = cookie.expires { properties[.expires] = expires }
        if cookie.isSecure { properties[.secure] = "TRUE" }
        if cookie.isHTTPOnly { properties[HTTPCookiePropertyKey("HttpOnly")] = "TRUE" }
        if let sameSite = cookie.sameSite { properties[HTTPCookiePropertyKey("SameSite")] = sameSite }
        return HTTPCookie(properties: properties)
    }
}

/// Where cookies are kept (`HTTPCookieStorage`), over Sesame's `CookieStore` (RFC 6265 rules,
/// public suffixes refused).
open class HTTPCookieStorage: NSObject, @unchecked Sendable {
    // @unchecked: `store` is Sendable; `cookieAcceptPolicy` is set as on Apple's, before use.
    let store: CookieStore
    /// Where a persistent storage keeps its cookies across launches; nil: in memory only.
    let file: PersistentCookieFile?
    /// Which cookies the storage accepts: `.never` refuses all, `.onlyFromMainDocumentDomain` those
    /// from the main document's domain (when the caller names it), `.always` all that pass the
    /// cookie rules of RFC 6265.
    open var cookieAcceptPolicy: HTTPCookie.AcceptPolicy = .always
    /// The cookie objects callers stored, by name, domain and path: handed back as they were
    /// given (Foundation's storage returns the objects it was given) while the store still
    /// holds the same cookie; a cookie set by a response is made from Sesame's.
    private let given = LockedValue<[CookieKey: (object: HTTPCookie, cookie: Cookie)]>([:])

    private struct CookieKey: Hashable {
        var name: String
        var domain: String
        var path: String
        init(_ cookie: Cookie) { (name, domain, path) = (cookie.name, cookie.domain, cookie.path) }
    }

    /// The program's storage, kept across launches (see ``init(persistentName:)``).
    public static let shared = HTTPCookieStorage(persistentName: "shared")

    /// A storage over `store`, in memory.
    public init(_ store: CookieStore) {
        self.store = store
        file = nil
    }

    /// A storage that keeps its cookies across launches in the file FoundationNetworking keeps
    /// them in, `$XDG_DATA_HOME/<program>/.cookies.<name>` (session cookies stay in memory),
    /// read now and written after each change. Changes a session makes as responses arrive are
    /// written on a background queue; those made through this storage's methods before they
    /// return.
    init(persistentName name: String) {
        let file = PersistentCookieFile(storageName: name)
        store = CookieStore(reportingChangesTo: { change in
            if file.record(change) { DispatchQueue.global(qos: .utility).async { file.write() } }
        })
        _ = store.restore(file.load())
        self.file = file
    }

    /// A storage of its own, in memory.
    public override convenience init() { self.init(CookieStore()) }

    /// Every cookie stored, or nil when there is none.
    open var cookies: [HTTPCookie]? { objects(for: store.allCookies) }

    /// The cookies that would be sent to `url`, most specific path first.
    open func cookies(for url: URL) -> [HTTPCookie]? { objects(for: store.cookies(for: url)) }

    /// Foundation's description: the number of cookies kept.
    open override var description: String { "<NSHTTPCookieStorage cookies count:\(store.allCookies.count)>" }

    private func objects(for cookies: [Cookie]) -> [HTTPCookie] {
        let given = given.withLock { $0 }
        return cookies.compactMap { cookie in
            if let kept = given[CookieKey(cookie)], Self.same(kept.cookie, cookie) { return kept.object }
            return HTTPCookie.make(cookie)
        }
    }

    /// The same stored cookie (the store's creation time aside).
    private static func same(_ first: Cookie, _ second: Cookie) -> Bool {
        first.value == second.value && first.expires == second.expires && first.isHostOnly == second.isHostOnly
            && first.isSecure == second.isSecure && first.isHTTPOnly == second.isHTTPOnly
    }

    private func keep(_ object: HTTPCookie, as cookie: Cookie) {
        let stored = store.allCookies
        given.withLock { given in
            given[CookieKey(cookie)] = (object, cookie)
            // Bounded by what the store keeps: objects of cookies it no longer holds are let go.
            if given.count > 2 * stored.count + 64 {
                let kept = Set(stored.map(CookieKey.init))
                given = given.filter { kept.contains($0.key) }
            }
        }
    }

    /// Stores `cookie` unless Sesame's cookie rules refuse it (a domain cookie for a public
    /// suffix, a malformed one): Foundation stores anything here, and a `.com` cookie would then go
    /// to every `.com` site. A difference from Apple's that is a security rule.
    open func setCookie(_ cookie: HTTPCookie) {
        guard cookieAcceptPolicy != .never else { return }
        let sesame = cookie.sesameCookie
        if store.set(sesame) { keep(cookie, as: sesame) }
        file?.write()
    }

    /// Stores the cookies `url` may set (each must belong to its host), as responses set them.
    open func setCookies(_ cookies: [HTTPCookie], for url: URL?, mainDocumentURL: URL?) {
        guard cookieAcceptPolicy != .never else { return }
        // Foundation's rule: the main document must be the URL's host or under it.
        if cookieAcceptPolicy == .onlyFromMainDocumentDomain, let url, let main = mainDocumentURL?.host?.lowercased(),
            let host = url.host?.lowercased(), main != host, !main.hasSuffix("." + host)
        {
            return
        }
        for cookie in cookies {
            let sesame = cookie.sesameCookie
            if store.set(sesame, from: url) { keep(cookie, as: sesame) }
        }
        file?.write()
    }

    /// Removes the cookie with `cookie`'s name, domain and path; written through to the storage's
    /// file before it returns.
    open func deleteCookie(_ cookie: HTTPCookie) {
        let target = cookie.sesameCookie
        store.remove { $0.name == target.name && $0.domain == target.domain && $0.path == target.path }
        file?.write()
    }

    /// Removes every cookie stored at or after `date`.
    open func removeCookies(since date: Date) {
        store.remove { $0.created >= date }
        file?.write()
    }

    /// The cookies ordered by `sortOrder` (the first descriptor that tells two apart decides).
    open func sortedCookies(using sortOrder: [NSSortDescriptor]) -> [HTTPCookie] {
        (cookies ?? []).sorted { first, second in
            for descriptor in sortOrder {
                switch descriptor.compare(first, to: second) {
                case .orderedAscending: return true
                case .orderedDescending: return false
                case .orderedSame: continue
                }
            }
            return false
        }
    }

    private static let groups = LockedValue<[String: HTTPCookieStorage]>([:])

    /// One storage per identifier for the life of the process, each with its own cookies, kept
    /// across launches as ``shared`` is, in `.cookies.<identifier>` beside it (app groups share a
    /// container on Apple's platforms; on Linux the identifier names the storage, as in
    /// FoundationNetworking).
    open class func sharedCookieStorage(forGroupContainerIdentifier identifier: String) -> HTTPCookieStorage {
        groups.withLock { groups in
            if let storage = groups[identifier] { return storage }
            let storage = HTTPCookieStorage(persistentName: identifier)
            groups[identifier] = storage
            return storage
        }
    }
}
