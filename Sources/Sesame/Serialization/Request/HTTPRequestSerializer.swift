import FoundationEssentials
import Glibc

/// Makes requests from a method, a URL and parameters (AFNetworking's request serializers).
public protocol RequestSerializing: Sendable {
    /// A request for `method` and `url` carrying `parameters`.
    func request(method: String, url: URL, parameters: [String: Parameter]?) throws -> HTTPRequest
}

/// What a request does about caches. Sesame keeps no HTTP cache; these only tell caches on the
/// way (`useProtocolCachePolicy` adds nothing; the reloading ones send `Cache-Control: no-cache`).
public enum RequestCachePolicy: Sendable, Hashable {
    /// Caching as the protocol's headers allow.
    case useProtocolCachePolicy
    /// Ignore any locally cached response.
    case reloadIgnoringLocalCacheData
    /// Ignore locally cached responses and ask caches on the way to revalidate.
    case reloadIgnoringLocalAndRemoteCacheData
}

/// AFNetworking's `AFHTTPRequestSerializer`: parameters go into the query for GET, HEAD and DELETE
/// and into an `application/x-www-form-urlencoded` body otherwise, percent-encoded in
/// ``stringEncoding`` (named as the body's `charset`), with default headers, a timeout, a cache
/// policy and cookie handling applied to every request.
///
/// ```swift
/// var serializer = HTTPRequestSerializer()
/// serializer.stringEncoding = .gb18030
/// let request = try serializer.request(method: "POST", url: url, parameters: ["name": "中文"])
/// ```
public struct HTTPRequestSerializer: RequestSerializing {
    /// The encoding parameters are written in before percent-encoding (default UTF-8).
    public var stringEncoding: TextEncoding = .utf8
    /// Sent with every request unless the request sets them: `Accept-Language` from the
    /// process's preferred languages and a `User-Agent`.
    public var defaultHeaders: HTTPHeaders
    /// The methods whose parameters go into the URL's query.
    public var methodsEncodingParametersInURI: Set<String> = ["GET", "HEAD", "DELETE"]
    /// The request's idle timeout (nil: the session's).
    public var timeout: Duration?
    /// The cache policy of the requests made: any reload policy sends `Cache-Control: no-cache` and
    /// `Pragma: no-cache` (Sesame keeps no response cache).
    public var cachePolicy: RequestCachePolicy = .useProtocolCachePolicy
    /// Whether requests send and keep cookies (`HTTPShouldHandleCookies`).
    public var handlesCookies = true

    /// A serializer with AFNetworking's defaults: UTF-8, `Accept-Language` from the preferred
    /// languages, a `User-Agent` naming the program and Sesame.
    public init() {
        defaultHeaders = HTTPHeaders()
        defaultHeaders.add(name: "Accept-Language", value: Self.acceptLanguage(Locale.preferredLanguages))
        defaultHeaders.add(
            name: "User-Agent",
            value: "\(ProcessInfo.processInfo.processName) (Linux) Sesame/\(Sesame.version)"
        )
    }

    /// Sets `Authorization: Basic …` for every request (`setAuthorizationHeaderFieldWithUsername:password:`).
    /// - Throws: ``SesameError/Code/invalidArgument`` for a user name with a colon.
    public mutating func setAuthorization(user: String, password: String) throws {
        defaultHeaders.replaceOrAdd(
            name: "Authorization",
            value: try BasicAuthentication.authorization(user: user, password: password)
        )
    }

    /// Removes the `Authorization` default header.
    public mutating func clearAuthorization() { defaultHeaders.remove(name: "Authorization") }

    /// The query string for `parameters` (`AFQueryStringFromParameters`, in ``stringEncoding``).
    public func queryString(_ parameters: [String: Parameter]) throws -> String {
        try FormURLEncoding.query(parameters, encoding: stringEncoding)
    }

    public func request(method: String, url: URL, parameters: [String: Parameter]?) throws -> HTTPRequest {
        var request = try baseRequest(method: method, url: url)
        guard let parameters, !parameters.isEmpty else { return request }
        let query = try queryString(parameters)
        if methodsEncodingParametersInURI.contains(request.method) {
            request.url = try Self.appendingQuery(query, to: request.url)
        } else {
            if !request.headers.contains("Content-Type") {
                request.headers.add(
                    name: "Content-Type",
                    value: "application/x-www-form-urlencoded; charset=\(stringEncoding.name.lowercased())"
                )
            }
            request.body = .data(Data(query.utf8))
        }
        return request
    }

    /// A request with the method, URL, default headers, timeout, cache policy and cookie setting,
    /// and no body.
    func baseRequest(method: String, url: URL) throws -> HTTPRequest {
        let method = method.uppercased()
        guard !method.isEmpty, method.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw SesameError(.invalidArgument, "'\(method)' is not an HTTP method")
        }
        var request = HTTPRequest(url: url, method: method)
        for field in defaultHeaders where !request.headers.contains(field.name) {
            request.headers.add(name: field.name, value: field.value)
        }
        if cachePolicy != .useProtocolCachePolicy {
            request.headers.replaceOrAdd(name: "Cache-Control", value: "no-cache")
            request.headers.replaceOrAdd(name: "Pragma", value: "no-cache")
        }
        request.timeout = timeout
        request.handlesCookies = handlesCookies
        return request
    }

    static func appendingQuery(_ query: String, to url: URL) throws -> URL {
        guard !query.isEmpty else { return url }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            throw SesameError(.unsupportedURL, "'\(url.redactedDescription)' cannot take a query")
        }
        components.percentEncodedQuery = components.percentEncodedQuery.map { $0 + "&" + query } ?? query
        guard let result = components.url else {
            throw SesameError(.unsupportedURL, "'\(url.redactedDescription)' cannot take the query '\(query)'")
        }
        return result
    }

    /// `Accept-Language` as AFNetworking writes it: up to six languages, q falling by 0.1.
    static func acceptLanguage(_ languages: [String]) -> String {
        let chosen = languages.isEmpty ? ["en"] : Array(languages.prefix(6))
        return chosen.enumerated().map { index, language in
            // q = 1.0 - 0.1 × index, in tenths: 0.9 to 0.5.
            index == 0 ? language : "\(language);q=0.\(10 - index)"
        }.joined(separator: ", ")
    }
}

/// AFNetworking's `AFJSONRequestSerializer`: parameters as a JSON body (`application/json`), or in
/// the query for GET, HEAD and DELETE.
public struct JSONRequestSerializer: RequestSerializing {
    /// Headers, query encoding, timeout, cache policy and cookies, as for form requests.
    public var base = HTTPRequestSerializer()
    /// Pretty-printing and the like; keys are always sorted, so bodies are reproducible.
    public var writingOptions: JSONEncoder.OutputFormatting = []

    /// A serializer that sends parameters as a JSON body.
    public init() {}

    public func request(method: String, url: URL, parameters: [String: Parameter]?) throws -> HTTPRequest {
        if base.methodsEncodingParametersInURI.contains(method.uppercased()) {
            return try base.request(method: method, url: url, parameters: parameters)
        }
        var request = try base.baseRequest(method: method, url: url)
        guard let parameters else { return request }
        if !request.headers.contains("Content-Type") {
            request.headers.add(name: "Content-Type", value: "application/json")
        }
        request.body = .data(try Self.json(.dictionary(parameters), options: writingOptions))
        return request
    }

    static func json(_ value: Parameter, options: JSONEncoder.OutputFormatting) throws -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = options.union(.sortedKeys)
        do {
            return try encoder.encode(value)
        } catch {
            throw SesameError(.invalidArgument, "the parameters cannot be written as JSON (a number is not finite?)")
        }
    }
}
