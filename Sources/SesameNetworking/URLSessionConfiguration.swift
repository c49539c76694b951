import Foundation
import Sesame

/// TLS protocol versions (`tls_protocol_version_t`), Apple's values.
public enum tls_protocol_version_t: UInt16, Sendable {
    /// TLS 1.0. Not supported: as a minimum, Sesame offers TLS 1.2.
    case TLSv10 = 0x0301
    /// TLS 1.1. Not supported: as a minimum, Sesame offers TLS 1.2.
    case TLSv11 = 0x0302
    /// TLS 1.2.
    case TLSv12 = 0x0303
    /// TLS 1.3.
    case TLSv13 = 0x0304
    /// DTLS 1.0, for datagrams; not used by HTTP.
    case DTLSv10 = 0xfeff
    /// DTLS 1.2, for datagrams; not used by HTTP.
    case DTLSv12 = 0xfefd
}

/// `connectionProxyDictionary` key: 1 to use the HTTP proxy.
public let kCFNetworkProxiesHTTPEnable = "HTTPEnable"
/// `connectionProxyDictionary` key: the HTTP proxy's host.
public let kCFNetworkProxiesHTTPProxy = "HTTPProxy"
/// `connectionProxyDictionary` key: the HTTP proxy's port.
public let kCFNetworkProxiesHTTPPort = "HTTPPort"
/// `connectionProxyDictionary` key: 1 to use the HTTPS proxy.
public let kCFNetworkProxiesHTTPSEnable = "HTTPSEnable"
/// `connectionProxyDictionary` key: the HTTPS proxy's host.
public let kCFNetworkProxiesHTTPSProxy = "HTTPSProxy"
/// `connectionProxyDictionary` key: the HTTPS proxy's port.
public let kCFNetworkProxiesHTTPSPort = "HTTPSPort"
/// `connectionProxyDictionary` key: hosts that bypass the proxies.
public let kCFNetworkProxiesExceptionsList = "ExceptionsList"

/// The settings of a session (`URLSessionConfiguration`); a session takes a copy when it is made.
open class URLSessionConfiguration: NSObject, NSCopying, @unchecked Sendable {
    // @unchecked: as Apple's, set before the session is made and copied by it.
    /// A configuration with the shared credential storage and cookie storage.
    open class var `default`: URLSessionConfiguration { URLSessionConfiguration() }

    /// A configuration that keeps nothing: credentials and cookies in memory for this session only.
    open class var ephemeral: URLSessionConfiguration {
        let configuration = URLSessionConfiguration()
        configuration.urlCredentialStorage = URLCredentialStorage(CredentialStorage())
        configuration.httpCookieStorage = HTTPCookieStorage(CookieStore())
        return configuration
    }

    /// The identifier of a background configuration. Kept; background sessions are not available on
    /// Linux.
    open var identifier: String?
    /// The cache policy of requests that do not set one. Kept and copied; SesameNetworking keeps no
    /// response cache, so every policy loads from the network.
    open var requestCachePolicy: URLRequest.CachePolicy = .useProtocolCachePolicy
    /// Seconds a request may wait for more data (60).
    open var timeoutIntervalForRequest: TimeInterval = 60
    /// Seconds a whole task may take (7 days).
    open var timeoutIntervalForResource: TimeInterval = 604_800
    /// Kept and copied; without effect: Linux has no cellular interface to avoid.
    open var allowsCellularAccess = true
    /// Kept and copied; without effect: Linux does not mark networks as expensive.
    open var allowsExpensiveNetworkAccess = true
    /// Kept and copied; without effect: Linux has no Low Data Mode.
    open var allowsConstrainedNetworkAccess = true
    /// Kept and copied; without effect: a task without a network fails at once instead of waiting.
    open var waitsForConnectivity = false
    /// Headers added to every request that does not set them.
    open var httpAdditionalHeaders: [AnyHashable: Any]?
    /// The most connections to one host at a time (6); at least 1 is used.
    open var httpMaximumConnectionsPerHost = 6
    /// Kept and copied; without effect: Sesame never pipelines HTTP/1.1 requests.
    open var httpShouldUsePipelining = false
    /// Whether requests send and store cookies (true).
    open var httpShouldSetCookies = true
    /// Which cookies responses may set. `.never` stores none; any other value stores every cookie
    /// that passes RFC 6265's rules (public suffixes refused), as if `.always`.
    open var httpCookieAcceptPolicy: HTTPCookie.AcceptPolicy = .onlyFromMainDocumentDomain
    /// Where cookies are kept (the shared storage); nil sends and stores none.
    open var httpCookieStorage: HTTPCookieStorage? = .shared
    /// Where credentials are looked up and kept (the shared storage); nil uses none.
    open var urlCredentialStorage: URLCredentialStorage? = .shared
    /// `kCFNetworkProxiesHTTPEnable`/`HTTPProxy`/`HTTPPort` and the `HTTPS` ones.
    open var connectionProxyDictionary: [AnyHashable: Any]?
    /// The lowest TLS version offered (TLS 1.2): TLS 1.3 or TLS 1.2, as no older version is
    /// supported.
    open var tlsMinimumSupportedProtocolVersion: tls_protocol_version_t = .TLSv12
    /// The highest TLS version offered (TLS 1.3).
    open var tlsMaximumSupportedProtocolVersion: tls_protocol_version_t = .TLSv13
    /// Kept and copied; without effect: Linux has no network service classes.
    open var networkServiceType: NSURLRequest.NetworkServiceType = .default
    /// Kept and copied; without effect: there is no system scheduler of discretionary transfers.
    open var isDiscretionary = false
    /// Kept and copied; without effect: Sesame keeps no response cache (every policy loads).
    open var urlCache: URLCache?
    /// Kept and copied; without effect: there are no background sessions.
    open var shouldUseExtendedBackgroundIdleMode = false

    /// `URLProtocol` subclasses asked, in order, before the network loads a request.
    open var protocolClasses: [AnyClass]? = []

    public override init() {}

    open func copy(with zone: NSZone? = nil) -> Any {
        let copy = URLSessionConfiguration()
        copy.identifier = identifier
        copy.requestCachePolicy = requestCachePolicy
        copy.timeoutIntervalForRequest = timeoutIntervalForRequest
        copy.timeoutIntervalForResource = timeoutIntervalForResource
        copy.allowsCellularAccess = allowsCellularAccess
        copy.allowsExpensiveNetworkAccess = allowsExpensiveNetworkAccess
        copy.allowsConstrainedNetworkAccess = allowsConstrainedNetworkAccess
        copy.waitsForConnectivity = waitsForConnectivity
        copy.httpAdditionalHeaders = httpAdditionalHeaders
        copy.httpMaximumConnectionsPerHost = httpMaximumConnectionsPerHost
        copy.httpShouldUsePipelining = httpShouldUsePipelining
        copy.httpShouldSetCookies = httpShouldSetCookies
        copy.httpCookieAcceptPolicy = httpCookieAcceptPolicy
        copy.httpCookieStorage = httpCookieStorage
        copy.urlCredentialStorage = urlCredentialStorage
        copy.connectionProxyDictionary = connectionProxyDictionary
        copy.tlsMinimumSupportedProtocolVersion = tlsMinimumSupportedProtocolVersion
        copy.tlsMaximumSupportedProtocolVersion = tlsMaximumSupportedProtocolVersion
        copy.networkServiceType = networkServiceType
        copy.isDiscretionary = isDiscretionary
        copy.urlCache = urlCache
        copy.shouldUseExtendedBackgroundIdleMode = shouldUseExtendedBackgroundIdleMode
        copy.protocolClasses = protocolClasses
        return copy
    }

    /// Sesame's configuration with Apple's behaviour where the two differ (see Migrating.md):
    /// Basic may go over plain http, as on Apple's platforms.
    func sesameConfiguration() -> SessionConfiguration {
        var configuration = SessionConfiguration.default
        configuration.requestTimeout = .seconds(max(timeoutIntervalForRequest, 0.001))
        configuration.connectTimeout = .seconds(max(timeoutIntervalForRequest, 0.001))
        configuration.resourceTimeout = .seconds(max(timeoutIntervalForResource, 0.001))
        configuration.maximumConnectionsPerHost = max(1, httpMaximumConnectionsPerHost)
        configuration.credentialStorage = urlCredentialStorage?.storage
        configuration.allowsCleartextPasswords = true
        let acceptsCookies = httpShouldSetCookies && httpCookieAcceptPolicy != .never
        configuration.handlesCookies = acceptsCookies
        configuration.cookieStore = acceptsCookies ? httpCookieStorage?.store : nil
        var headers = HTTPHeaders()
        headers.add(name: "User-Agent", value: "SesameNetworking/\(Sesame.version)")
        headers.add(name: "Accept", value: "*/*")
        for (key, value) in httpAdditionalHeaders ?? [:] {
            guard let name = key as? String else { continue }
            headers.replaceOrAdd(name: name, value: "\(value)")
        }
        configuration.defaultHeaders = headers
        configuration.tls.minimumVersion = tlsMinimumSupportedProtocolVersion.rawValue >= 0x0304 ? .tls13 : .tls12
        configuration.tls.maximumVersion = tlsMaximumSupportedProtocolVersion.rawValue < 0x0304 ? .tls12 : nil
        if let proxies = connectionProxyDictionary { configuration.proxy = Self.proxy(proxies) }
        return configuration
    }

    private static func proxy(_ dictionary: [AnyHashable: Any]) -> ProxyConfiguration {
        func endpoint(_ enable: String, _ host: String, _ port: String) -> String? {
            let enabled = (dictionary[enable] as? Bool) ?? ((dictionary[enable] as? Int).map { $0 != 0 } ?? false)
            guard enabled, let name = dictionary[host] as? String, !name.isEmpty else { return nil }
            let number = (dictionary[port] as? Int) ?? (dictionary[port] as? String).flatMap(Int.init)
            return "http://\(name)" + (number.map { ":\($0)" } ?? "")
        }
        let exceptions = (dictionary[kCFNetworkProxiesExceptionsList] as? [String])?.joined(separator: ",") ?? ""
        return ProxyConfiguration(
            httpProxy: endpoint(kCFNetworkProxiesHTTPEnable, kCFNetworkProxiesHTTPProxy, kCFNetworkProxiesHTTPPort),
            httpsProxy: endpoint(kCFNetworkProxiesHTTPSEnable, kCFNetworkProxiesHTTPSProxy, kCFNetworkProxiesHTTPSPort),
            noProxy: NoProxyList(exceptions)
        )
    }
}
