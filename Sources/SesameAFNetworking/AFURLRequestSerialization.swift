import Sesame

/// Makes a request carry parameters (`AFURLRequestSerialization`).
public protocol AFURLRequestSerialization: NSObjectProtocol {
    /// `request` with `parameters` encoded and the serializer's headers added; nil with `error`
    /// set when the parameters cannot be encoded.
    func request(
        bySerializingRequest request: URLRequest,
        withParameters parameters: Any?,
        error: NSErrorPointer
    )
        -> URLRequest?
}

/// How parameters become a query string (`AFHTTPRequestQueryStringSerializationStyle`).
public enum AFHTTPRequestQueryStringSerializationStyle: UInt, Sendable {
    /// AFNetworking's percent-escaped `key=value` pairs, nested keys as `key[sub]` and arrays as
    /// `key[]`.
    case defaultStyle = 0
}

/// AFNetworking's `AFHTTPRequestSerializer`: parameters in the query for GET, HEAD and DELETE,
/// in an `application/x-www-form-urlencoded` body otherwise; default headers (`Accept-Language`,
/// `User-Agent`) on every request that does not set them.
///
/// `stringEncoding` (an `NSStringEncoding`, such as
/// `CFStringConvertEncodingToNSStringEncoding(kCFStringEncodingGB_18030_2000)`) is the encoding
/// parameters are written in before they are percent-encoded, as AFNetworking 2 did; AFNetworking 3
/// and 4 always percent-encode UTF-8 and use it only to turn the (ASCII) form body into bytes.
/// A body in another encoding than UTF-8 names it in its `Content-Type` charset.
///
/// `request(withMethod:urlString:parameters:)` returns a `URLRequest` value where AFNetworking
/// returns an `NSMutableURLRequest`: declare it with `var` to change it.
open class AFHTTPRequestSerializer: NSObject, AFURLRequestSerialization, @unchecked Sendable {
    // @unchecked: the settings are behind `lock`; AFNetworking's serializers are configured
    // before use, and reads here never see a torn value.
    let lock = NSLock()
    private var headers: [(name: String, value: String)]
    private var encoding: UInt = String.Encoding.utf8.rawValue
    private var uriMethods: Set<String> = ["GET", "HEAD", "DELETE"]
    private var queryBlock: ((URLRequest, Any, NSErrorPointer) -> String?)?
    private var pendingError: NSError?
    private var requestTimeout: TimeInterval?
    private var requestCachePolicy: URLRequest.CachePolicy?
    private var requestHandlesCookies: Bool?
    private var requestPipelining: Bool?
    private var requestCellular: Bool?

    public required override init() {
        headers = HTTPRequestSerializer().defaultHeaders.map { ($0.name, $0.value) }
        super.init()
    }

    /// `+serializer`.
    open class func serializer() -> Self { Self() }

    /// The encoding parameters are written in (default UTF-8).
    open var stringEncoding: UInt {
        get { lock.withLock { encoding } }
        set { lock.withLock { encoding = newValue } }
    }

    /// The methods whose parameters go into the URL's query.
    open var httpMethodsEncodingParametersInURI: Set<String> {
        get { lock.withLock { uriMethods } }
        set { lock.withLock { uriMethods = Set(newValue.map { $0.uppercased() }) } }
    }

    /// The headers added to every request that does not set them.
    open var httpRequestHeaders: [String: String] {
        lock.withLock { Dictionary(headers.map { ($0.name, $0.value) }) { first, _ in first } }
    }

    /// The timeout of the requests made, in seconds (default 60).
    open var timeoutInterval: TimeInterval {
        get { lock.withLock { requestTimeout ?? 60 } }
        set { lock.withLock { requestTimeout = newValue } }
    }
    /// The cache policy of the requests made. SesameNetworking keeps no response cache: every
    /// policy loads from the network.
    open var cachePolicy: URLRequest.CachePolicy {
        get { lock.withLock { requestCachePolicy ?? .useProtocolCachePolicy } }
        set { lock.withLock { requestCachePolicy = newValue } }
    }
    /// Whether the requests made send and store cookies (default true).
    open var httpShouldHandleCookies: Bool {
        get { lock.withLock { requestHandlesCookies ?? true } }
        set { lock.withLock { requestHandlesCookies = newValue } }
    }
    /// Kept for AFNetworking code that sets it; not copied to requests (FoundationNetworking
    /// deprecates the request's flag, and Sesame never pipelines HTTP/1.1 requests).
    open var httpShouldUsePipelining: Bool {
        get { lock.withLock { requestPipelining ?? false } }
        set { lock.withLock { requestPipelining = newValue } }
    }
    /// Copied to the requests made; without effect on Linux (there is no cellular interface to
    /// avoid).
    open var allowsCellularAccess: Bool {
        get { lock.withLock { requestCellular ?? true } }
        set { lock.withLock { requestCellular = newValue } }
    }

    /// Sets (or, with nil, removes) a header added to every request.
    open func setValue(_ value: String?, forHTTPHeaderField field: String) {
        lock.withLock {
            headers.removeAll { $0.name.caseInsensitiveCompare(field) == .orderedSame }
            if let value { headers.append((field, value)) }
        }
    }

    /// The header added to every request for `field` (compared without case), if any.
    open func value(forHTTPHeaderField field: String) -> String? {
        lock.withLock { headers.first { $0.name.caseInsensitiveCompare(field) == .orderedSame }?.value }
    }

    /// `Authorization: Basic` for every request. A user name with a colon cannot be sent in Basic
    /// (RFC 7617 section 2): the header is not set, and every request this serializer makes fails
    /// with that error until the authorization is set again or cleared.
    open func setAuthorizationHeaderFieldWithUsername(_ username: String, password: String) {
        do {
            let value = try BasicAuthentication.authorization(user: username, password: password)
            setValue(value, forHTTPHeaderField: "Authorization")
            lock.withLock { pendingError = nil }
        } catch {
            setValue(nil, forHTTPHeaderField: "Authorization")
            lock.withLock { pendingError = AFRequestError.from(error) }
        }
    }

    /// Removes the `Authorization` header and any error a failed
    /// ``setAuthorizationHeaderFieldWithUsername(_:password:)`` left.
    open func clearAuthorizationHeader() {
        setValue(nil, forHTTPHeaderField: "Authorization")
        lock.withLock { pendingError = nil }
    }

    /// Returns to AFNetworking's own query string serialization, dropping a block given to
    /// `setQueryStringSerializationWith(_:)`.
    open func setQueryStringSerializationWith(_ style: AFHTTPRequestQueryStringSerializationStyle) {
        lock.withLock { queryBlock = nil }
    }

    /// Parameters become the query string `block` returns (it may set the error and return nil).
    open func setQueryStringSerializationWith(_ block: ((URLRequest, Any, NSErrorPointer) -> String?)?) {
        lock.withLock { queryBlock = block }
    }

    /// A request for `method` and `URLString` with `parameters` encoded.
    /// - Throws: an error in ``AFURLRequestSerializationErrorDomain``: a string that is not a URL
    ///   (`NSURLErrorBadURL`), parameters that cannot be encoded.
    open func request(withMethod method: String, urlString URLString: String, parameters: Any?) throws -> URLRequest {
        var request = try baseRequest(method: method, urlString: URLString)
        var error: NSError?
        guard let serialized = self.request(bySerializingRequest: request, withParameters: parameters, error: &error)
        else { throw error ?? AFRequestError.invalidParameters("the serializer returned no request") }
        request = serialized
        return request
    }

    /// A `multipart/form-data` request: `parameters` as text fields (nested names as in a
    /// query), then the parts `block` appends. Files are streamed from disk when it is sent.
    /// On failure `error` is set and the request has no body.
    open func multipartFormRequest(
        withMethod method: String,
        urlString URLString: String,
        parameters: [String: Any]?,
        constructingBodyWith block: ((any AFMultipartFormData) -> Void)?,
        error: NSErrorPointer
    ) -> URLRequest {
        let fallback = URLRequest(url: URL(string: URLString) ?? URL(fileURLWithPath: "/"))
        do {
            var request = try baseRequest(method: method, urlString: URLString)
            request = try addingHeaders(to: request)
            let form = AFStreamingMultipartFormData(stringEncoding: stringEncoding)
            if let parameters { try form.appendParameters(parameters) }
            block?(form)
            try form.apply(to: &request)
            return request
        } catch let failure {
            error?.pointee = AFRequestError.from(failure)
            return fallback
        }
    }

    // MARK: - AFURLRequestSerialization

    open func request(
        bySerializingRequest request: URLRequest,
        withParameters parameters: Any?,
        error: NSErrorPointer
    ) -> URLRequest? {
        do {
            var request = try addingHeaders(to: request)
            let query = try queryString(for: request, parameters)
            if httpMethodsEncodingParametersInURI.contains((request.httpMethod ?? "GET").uppercased()) {
                if let query, !query.isEmpty { request.url = try Self.appendingQuery(query, to: request.url) }
            } else {
                if request.value(forHTTPHeaderField: "Content-Type") == nil {
                    request.setValue(formContentType, forHTTPHeaderField: "Content-Type")
                }
                // An empty string is a valid form body.
                request.httpBody = Data((query ?? "").utf8)
            }
            return request
        } catch let failure {
            error?.pointee = AFRequestError.from(failure, request: request)
            return nil
        }
    }

    // MARK: - Pieces for subclasses

    /// `request` with the default headers it does not set, and the request options set here.
    /// - Throws: the error a failed `setAuthorizationHeaderFieldWithUsername` left.
    func addingHeaders(to request: URLRequest) throws -> URLRequest {
        let (headers, failure, timeout, policy, cookies, cellular) = lock.withLock {
            (self.headers, pendingError, requestTimeout, requestCachePolicy, requestHandlesCookies, requestCellular)
        }
        if let failure { throw failure }
        var request = request
        for (name, value) in headers where request.value(forHTTPHeaderField: name) == nil {
            request.setValue(value, forHTTPHeaderField: name)
        }
        if let timeout { request.timeoutInterval = timeout }
        if let policy { request.cachePolicy = policy }
        if let cookies { request.httpShouldHandleCookies = cookies }
        if let cellular { request.allowsCellularAccess = cellular }
        return request
    }

    /// The encoding as Sesame writes it.
    /// - Throws: for an `NSStringEncoding` Sesame cannot write.
    var textEncoding: TextEncoding {
        get throws {
            let raw = stringEncoding
            guard let encoding = TextEncoding(String.Encoding(rawValue: raw)) else {
                throw AFRequestError.invalidParameters("the string encoding \(raw) is not one Sesame can write")
            }
            return encoding
        }
    }

    private var formContentType: String {
        let raw = stringEncoding
        guard raw != String.Encoding.utf8.rawValue, let encoding = TextEncoding(String.Encoding(rawValue: raw)) else {
            return "application/x-www-form-urlencoded"
        }
        return "application/x-www-form-urlencoded; charset=\(encoding.name.lowercased())"
    }

    private func queryString(for request: URLRequest, _ parameters: Any?) throws -> String? {
        guard let parameters = parameters.map(AFQueryString.unwrapped), !AFQueryString.isNull(parameters) else {
            return nil
        }
        if let block = lock.withLock({ queryBlock }) {
            var error: NSError?
            let query = block(request, parameters, &error)
            if let error { throw error }
            return query
        }
        return try AFQueryString.query(parameters, encoding: try textEncoding)
    }

    func baseRequest(method: String, urlString: String) throws -> URLRequest {
        guard let url = URL(string: urlString), url.scheme != nil else { throw AFRequestError.badURL(urlString) }
        guard !method.isEmpty, method.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw AFRequestError.invalidParameters("'\(method)' is not an HTTP method")
        }
        var request = URLRequest(url: url)
        request.httpMethod = method
        return request
    }

    static func appendingQuery(_ query: String, to url: URL?) throws -> URL {
        guard let url, var components = URLComponents(url: url, resolvingAgainstBaseURL: true) else {
            throw AFRequestError.badURL(url?.absoluteString ?? "")
        }
        components.percentEncodedQuery = components.percentEncodedQuery.map { $0 + "&" + query } ?? query
        guard let result = components.url else { throw AFRequestError.badURL(url.absoluteString + "?" + query) }
        return result
    }
}

/// AFNetworking's `AFJSONRequestSerializer`: parameters as a JSON body (`application/json`), or
/// in the query for GET, HEAD and DELETE.
open class AFJSONRequestSerializer: AFHTTPRequestSerializer, @unchecked Sendable {
    private var options: JSONSerialization.WritingOptions = []

    /// The options of the JSON written (`.prettyPrinted`, `.sortedKeys`, ...).
    open var writingOptions: JSONSerialization.WritingOptions {
        get { lock.withLock { options } }
        set { lock.withLock { options = newValue } }
    }

    /// `+serializerWithWritingOptions:`.
    public convenience init(writingOptions: JSONSerialization.WritingOptions) {
        self.init()
        self.writingOptions = writingOptions
    }

    open override func request(
        bySerializingRequest request: URLRequest,
        withParameters parameters: Any?,
        error: NSErrorPointer
    ) -> URLRequest? {
        if httpMethodsEncodingParametersInURI.contains((request.httpMethod ?? "GET").uppercased()) {
            return super.request(bySerializingRequest: request, withParameters: parameters, error: error)
        }
        do {
            var request = try addingHeaders(to: request)
            guard let parameters = parameters.map(AFQueryString.unwrapped), !AFQueryString.isNull(parameters) else {
                return request
            }
            if request.value(forHTTPHeaderField: "Content-Type") == nil {
                request.setValue("application/json", forHTTPHeaderField: "Content-Type")
            }
            guard JSONSerialization.isValidJSONObject(parameters) else {
                throw AFRequestError.invalidParameters("The `parameters` argument is not valid JSON.")
            }
            request.httpBody = try JSONSerialization.data(withJSONObject: parameters, options: writingOptions)
            return request
        } catch let failure {
            error?.pointee = AFRequestError.from(failure, request: request)
            return nil
        }
    }
}
