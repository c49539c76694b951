import FoundationEssentials

/// A request's head as either protocol sends it: the target, the header fields, and whether the
/// body waits for `100 Continue`.
enum RequestHead {
    /// The header fields actually sent: Host first, the request's own, then the defaults.
    static func headers(for request: HTTPRequest, origin: Origin, settings: ExchangeSettings) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.reserveCapacity(request.headers.count + settings.addedHeaders.count + 2)
        headers.add(name: "Host", value: request.headers.first("Host") ?? origin.hostHeader)
        for field in request.headers where !field.name.caseInsensitiveEquals("Host") {
            headers.add(name: field.name, value: field.value)
        }
        for field in settings.addedHeaders where !headers.contains(field.name) {
            headers.add(name: field.name, value: field.value)
        }
        if let body = request.body {
            headers.remove(name: "Content-Length")
            headers.remove(name: "Transfer-Encoding")
            if let length = body.knownLength {
                headers.add(name: "Content-Length", value: String(length))
            } else {
                headers.add(name: "Transfer-Encoding", value: "chunked")
            }
        } else if request.method == "POST" || request.method == "PUT" || request.method == "PATCH",
            !headers.contains("Content-Length")
        {
            headers.add(name: "Content-Length", value: "0")
        }
        return headers
    }

    /// Whether `request`, sent with `headers`, waits for `100 Continue` before its body (RFC 9110
    /// section 10.1.1; the expectation is case-insensitive), over either protocol.
    static func expectsContinue(_ request: HTTPRequest, headers: HTTPHeaders) -> Bool {
        request.hasBody && headers.first("Expect")?.caseInsensitiveEquals("100-continue") == true
    }

    /// The origin-form request target: path and query, percent-encoded as in the URL.
    static func target(of url: URL) -> String {
        let absolute = url.baseURL == nil ? url : url.absoluteURL
        var path = absolute.path(percentEncoded: true)
        if path.isEmpty { path = "/" }
        if let query = absolute.query(percentEncoded: true) { path += "?" + query }
        return path
    }

    /// The request target for a route: absolute form to a forwarding proxy (RFC 9112 3.2.2),
    /// origin form (`originForm`, when already known) otherwise.
    static func requestTarget(of url: URL, route: ProxyRoute, originForm: String? = nil) -> String {
        let path = originForm ?? target(of: url)
        guard case .forward = route, let origin = Origin(url) else { return path }
        return "\(origin.scheme)://\(origin.hostHeader)\(path)"
    }
}
