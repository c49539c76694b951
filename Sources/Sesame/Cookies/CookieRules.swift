import FoundationEssentials
import Glibc

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

    /// A DNS name as hosts are named (RFC 1123 section 2.1, with the underscore real names carry):
    /// labels of letters, digits, hyphens and underscores in its A-label form, none empty, at most
    /// 63 bytes each and 253 in all. A domain that is not one could never match a request's host,
    /// and would not read back as itself from a cookie file.
    static func isHostName(_ domain: String) -> Bool {
        guard let ascii = Punycode.asciiDomain(domain), !ascii.isEmpty, ascii.utf8.count <= 253 else { return false }
        return ascii.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
            !label.isEmpty && label.utf8.count <= 63
                && label.utf8.allSatisfy { byte in
                    (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
                }
        }
    }

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

    /// Why the store refuses `cookie` when it is set through an API rather than by `Set-Cookie`
    /// (which ``SetCookieParser`` checks as it parses); nil when it takes it. The same rules:
    /// a name, at most 4,096 bytes of name and value, no control character (a cookie file could
    /// not hold it), a path, a domain that is a DNS name or an IP address, never a domain cookie
    /// for a public suffix of either section of the list (it would go to every site under it) or
    /// for an IP address, and, for a cookie set for `url`, a domain `url`'s host belongs to and
    /// Secure only from https.
    static func refusal(_ cookie: Cookie, from url: URL?) -> String? {
        guard !cookie.name.isEmpty else { return "it has no name" }
        guard cookie.name.utf8.count + cookie.value.utf8.count <= SetCookieParser.maximumSize else {
            return "its name and value are over \(SetCookieParser.maximumSize) bytes"
        }
        let fields = [cookie.name, cookie.value, cookie.domain, cookie.path]
        guard !fields.contains(where: { $0.utf8.contains { $0 < 0x20 || $0 == 0x7F } }) else {
            return "a field holds a control character"
        }
        guard cookie.path.hasPrefix("/") else { return "its path does not start with '/'" }
        let isAddress = isIPAddress(cookie.domain)
        guard isAddress || isHostName(cookie.domain) else {
            return "its domain '\(cookie.domain)' is not a host name"
        }
        if !cookie.isHostOnly {
            if isAddress { return "a cookie for an IP address goes to that address only" }
            if PublicSuffixList.isPublicSuffix(cookie.domain, in: .all) {
                return "its domain '\(cookie.domain)' is a public suffix: it would go to every site under it"
            }
        }
        guard let url else { return nil }
        guard let target = Target(url) else { return "'\(url)' has no host" }
        let belongs =
            cookie.isHostOnly
            ? target.host == canonicalHost(cookie.domain) : domainMatches(host: target.host, domain: cookie.domain)
        guard belongs else { return "'\(target.host)' may not set a cookie for '\(cookie.domain)'" }
        if cookie.isSecure && !target.isSecure { return "a Secure cookie cannot be set from '\(url.scheme ?? "")'" }
        return nil
    }

    /// Section 5.1.4: the directory of the request path.
    static func defaultPath(_ url: URL) -> String {
        let path = requestPath(url)
        guard path.hasPrefix("/"), let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
    }
}
