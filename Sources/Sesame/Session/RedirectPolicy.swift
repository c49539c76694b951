import FoundationEssentials
import Glibc

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
