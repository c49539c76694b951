import FoundationEssentials
import Glibc

/// Which proxy, if any, a request goes through.
///
/// `http://` URLs go to ``httpProxy`` as absolute-form requests; `https://` URLs go through a
/// `CONNECT` tunnel on ``httpsProxy``, with TLS to the origin inside it (SNI and trust are the
/// origin's). Hosts in ``noProxy`` are reached directly. A proxy's 407 is a challenge with a proxy
/// protection space, answered like a 401; `Proxy-Authorization` goes only to the proxy, and origin
/// credentials never go into a `CONNECT` request.
///
/// ``environment(_:)`` reads curl's variables, and is what ``SessionConfiguration/default`` uses:
/// `http_proxy` (lower case only: `HTTP_PROXY` may be set by a CGI request's `Proxy:` header),
/// `https_proxy` / `HTTPS_PROXY`, `all_proxy` / `ALL_PROXY` for both when the specific one is unset,
/// and `no_proxy` / `NO_PROXY`.
public struct ProxyConfiguration: Hashable, Sendable {
    /// The proxy for `http://` URLs, in curl's syntax (`[scheme://][user:password@]host[:port]`).
    public var httpProxy: String?
    /// The proxy for `https://` URLs (a `CONNECT` tunnel).
    public var httpsProxy: String?
    /// Hosts that are reached directly.
    public var noProxy: NoProxyList

    /// No proxy at all.
    public static let none = ProxyConfiguration(httpProxy: nil, httpsProxy: nil, noProxy: NoProxyList(entries: []))

    /// Proxies given as URLs (`http://proxy:3128`, `http://user:pass@proxy:3128`) for plain and TLS
    /// requests, and the hosts that bypass them.
    public init(httpProxy: String?, httpsProxy: String?, noProxy: NoProxyList = NoProxyList(entries: [])) {
        self.httpProxy = httpProxy
        self.httpsProxy = httpsProxy
        self.noProxy = noProxy
    }

    /// One proxy for every URL (curl's `-x`).
    public init(proxy: String, noProxy: NoProxyList = NoProxyList(entries: [])) {
        self.init(httpProxy: proxy, httpsProxy: proxy, noProxy: noProxy)
    }

    /// The proxies named by the environment, as curl reads them.
    public static func environment(
        _ variables: [String: String] = ProcessInfo.processInfo.environment
    )
        -> ProxyConfiguration
    {
        func value(_ names: String...) -> String? {
            for name in names { if let value = variables[name], !value.isEmpty { return value } }
            return nil
        }
        let all = value("all_proxy", "ALL_PROXY")
        return ProxyConfiguration(
            httpProxy: value("http_proxy") ?? all,
            httpsProxy: value("https_proxy", "HTTPS_PROXY") ?? all,
            noProxy: NoProxyList(value("no_proxy", "NO_PROXY") ?? "")
        )
    }

    /// How a request for `url` is routed, with the credential from the proxy URL's user info.
    /// - Throws: ``SesameError/Code/invalidArgument`` when the proxy setting is not a usable proxy URL.
    func route(for url: URL) throws -> (route: ProxyRoute, credential: Credential?) {
        try ProxyRouter(self).route(for: url)
    }
}

/// A ``ProxyConfiguration`` with its proxy URLs parsed once (a session routes every request, and
/// parsing a URL costs more than the rest of the routing).
struct ProxyRouter: Sendable {
    private typealias Parsed = Result<(endpoint: ProxyEndpoint, credential: Credential?), SesameError>
    private let httpProxy: Parsed?
    private let httpsProxy: Parsed?
    private let noProxy: NoProxyList

    init(_ configuration: ProxyConfiguration) {
        func parse(_ setting: String?) -> Parsed? {
            setting.map { setting in
                do {
                    return .success(try ProxyEndpoint.parse(setting))
                } catch let error as SesameError {
                    return .failure(error)
                } catch {
                    return .failure(SesameError(.invalidArgument, "\(error)"))
                }
            }
        }
        httpProxy = parse(configuration.httpProxy)
        httpsProxy = parse(configuration.httpsProxy)
        noProxy = configuration.noProxy
    }

    /// How a request for `url` is routed, with the credential from the proxy URL's user info.
    /// - Throws: ``SesameError/Code/invalidArgument`` when the proxy setting is not a usable proxy URL.
    func route(for url: URL) throws -> (route: ProxyRoute, credential: Credential?) {
        if httpProxy == nil && httpsProxy == nil { return (.direct, nil) }  // the usual case, per request
        guard let scheme = url.scheme?.lowercased(), let host = url.host(percentEncoded: false) else {
            return (.direct, nil)
        }
        return try route(scheme: scheme, host: host)
    }

    /// The route to `origin` (its scheme and host are normalized already: no URL to take apart).
    func route(for origin: Origin) throws -> (route: ProxyRoute, credential: Credential?) {
        if httpProxy == nil && httpsProxy == nil { return (.direct, nil) }
        return try route(scheme: origin.scheme, host: origin.host)
    }

    private func route(scheme: String, host: String) throws -> (route: ProxyRoute, credential: Credential?) {
        let setting = scheme == "https" ? httpsProxy : httpProxy
        guard let setting, !noProxy.matches(host: host) else { return (.direct, nil) }
        let (endpoint, credential) = try setting.get()
        return (scheme == "https" ? .tunnel(endpoint) : .forward(endpoint), credential)
    }
}
