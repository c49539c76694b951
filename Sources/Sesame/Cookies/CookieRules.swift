import Foundation

/// RFC 6265 section 5.1: canonical hosts, domain and path matching, the default path.
enum CookieRules {
    /// What cookie matching needs of a request URL.
    struct Target {
        let host: String
        let path: String
        let isSecure: Bool

        init?(_ url: URL) {
            guard let host = url.host(percentEncoded: false), let scheme = url.scheme?.lowercased() else {
                return nil
            }
            self.host = CookieRules.canonicalHost(host)
            self.path = CookieRules.requestPath(url)
            self.isSecure = scheme == "https"
        }
    }

    /// Section 5.1.2: lowercase, internationalised labels as A-labels (the form `Domain` is
    /// compared in), no brackets or trailing dot.
    static func canonicalHost(_ host: String) -> String {
        var value = Punycode.asciiDomain(host) ?? host.lowercased()
        if value.hasPrefix("[") && value.hasSuffix("]") { value = String(value.dropFirst().dropLast()) }
        if value.hasSuffix(".") { value.removeLast() }
        return value
    }

    static func isIPAddress(_ host: String) -> Bool { IPAddressBytes(host) != nil }

    /// Section 5.1.3: identical, or `host` ends with "." + `domain` and is not an IP address.
    static func domainMatches(host: String, domain: String) -> Bool {
        if host == domain { return true }
        return !isIPAddress(host) && host.hasSuffix("." + domain)
    }

    /// Section 5.1.4.
    static func pathMatches(_ requestPath: String, cookiePath: String) -> Bool {
        if requestPath == cookiePath { return true }
        guard requestPath.hasPrefix(cookiePath) else { return false }
        return cookiePath.hasSuffix("/") || requestPath.dropFirst(cookiePath.count).first == "/"
    }

    /// The URL's path for matching ("/" when empty), percent-encoded as sent.
    static func requestPath(_ url: URL) -> String {
        let path = url.path(percentEncoded: true)
        return path.isEmpty ? "/" : path
    }

    /// Section 5.1.4: the directory of the request path.
    static func defaultPath(_ url: URL) -> String {
        let path = requestPath(url)
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}
