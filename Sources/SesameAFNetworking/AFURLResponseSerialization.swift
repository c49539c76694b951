import Sesame

/// Turns a response and its body into an object (`AFURLResponseSerialization`).
public protocol AFURLResponseSerialization: NSObjectProtocol {
    /// The object for `response` and `data`; `error` is set when the response is refused (the
    /// object may still be given, as for a JSON body with an unacceptable status).
    func responseObject(for response: URLResponse?, data: Data?, error: NSErrorPointer) -> Any?
}

/// AFNetworking's `AFHTTPResponseSerializer`: validates the status code and the content type,
/// and gives the body as `Data`.
open class AFHTTPResponseSerializer: NSObject, AFURLResponseSerialization, @unchecked Sendable {
    // @unchecked: the settings are behind `lock`.
    let lock = NSLock()
    private var statusCodes: IndexSet? = IndexSet(integersIn: 200..<300)
    private var contentTypes: Set<String>?
    private var encoding: UInt = String.Encoding.utf8.rawValue

    public required override init() { super.init() }

    /// `+serializer`.
    open class func serializer() -> Self { Self() }

    /// The status codes accepted (default 200–299); nil accepts every code.
    open var acceptableStatusCodes: IndexSet? {
        get { lock.withLock { statusCodes } }
        set { lock.withLock { statusCodes = newValue } }
    }

    /// The MIME types accepted (compared with the response's `mimeType`); nil accepts every type.
    open var acceptableContentTypes: Set<String>? {
        get { lock.withLock { contentTypes } }
        set { lock.withLock { contentTypes = newValue } }
    }

    /// Ignored, as in AFNetworking: the body's `charset` decides, UTF-8 when it names none.
    @available(*, deprecated, message: "AFNetworking ignores it; the body's charset decides")
    open var stringEncoding: UInt {
        get { lock.withLock { encoding } }
        set { lock.withLock { encoding = newValue } }
    }

    /// Checks the status code and the content type (`validateResponse:data:error:`).
    /// - Throws: an error in ``AFURLResponseSerializationErrorDomain``: `NSURLErrorBadServerResponse`
    ///   for a status code, `NSURLErrorCannotDecodeContentData` for the content type of a
    ///   non-empty body, with the
    ///   response (``AFNetworkingOperationFailingURLResponseErrorKey``) and its body
    ///   (``AFNetworkingOperationFailingURLResponseDataErrorKey``); a response failing both has the
    ///   content-type error under the status-code one (`NSUnderlyingErrorKey`).
    open func validate(_ response: HTTPURLResponse?, data: Data?) throws {
        guard let response else { return }
        let (codes, types) = lock.withLock { (statusCodes, contentTypes) }
        var failure: NSError?
        let body = data ?? Data()
        // As AFNetworking: the type of an empty body is no error.
        if let types, !body.isEmpty, !(response.mimeType.map(types.contains) ?? false) {
            failure = Self.failure(
                code: NSURLErrorCannotDecodeContentData,
                "Request failed: unacceptable content-type: \(response.mimeType ?? "(none)")",
                response,
                data
            )
        }
        if let codes, !(response.statusCode >= 0 && codes.contains(response.statusCode)) {
            // Apple's phrases are lower-case ("not found"); FoundationNetworking's are title case.
            let reason = HTTPURLResponse.localizedString(forStatusCode: response.statusCode).lowercased()
            failure = AFError(
                Self.failure(
                    code: NSURLErrorBadServerResponse,
                    "Request failed: \(reason) (\(response.statusCode))",
                    response,
                    data
                ),
                underlying: failure
            )
        }
        if let failure { throw failure }
    }

    open func responseObject(for response: URLResponse?, data: Data?, error: NSErrorPointer) -> Any? {
        do {
            try validate(response as? HTTPURLResponse, data: data)
        } catch let failure {
            error?.pointee = failure as NSError
        }
        return data
    }

    static func failure(code: Int, _ description: String, _ response: HTTPURLResponse, _ data: Data?) -> NSError {
        var userInfo: [String: Any] = [
            NSLocalizedDescriptionKey: description,
            AFNetworkingOperationFailingURLResponseErrorKey: response,
        ]
        if let url = response.url {
            userInfo[NSURLErrorFailingURLErrorKey] = url
        }
        if let data { userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] = data }
        return NSError(domain: AFURLResponseSerializationErrorDomain, code: code, userInfo: userInfo)
    }
}

/// AFNetworking's `AFJSONResponseSerializer`: validates as ``AFHTTPResponseSerializer`` with
/// `application/json`, `text/json` and `text/javascript` accepted, and parses the body with
/// `JSONSerialization` (UTF-8, UTF-16 or UTF-32). An empty body, or a single space, is no object
/// and no error. A body with an unacceptable status is still parsed, and the status error kept.
open class AFJSONResponseSerializer: AFHTTPResponseSerializer, @unchecked Sendable {
    private var options: JSONSerialization.ReadingOptions = []
    private var removesNulls = false

    public required init() {
        super.init()
        acceptableContentTypes = ["application/json", "text/json", "text/javascript"]
    }

    /// `+serializerWithReadingOptions:`.
    public convenience init(readingOptions: JSONSerialization.ReadingOptions) {
        self.init()
        self.readingOptions = readingOptions
    }

    /// The options JSON is read with (`.fragmentsAllowed`, `.mutableContainers`, ...).
    open var readingOptions: JSONSerialization.ReadingOptions {
        get { lock.withLock { options } }
        set { lock.withLock { options = newValue } }
    }

    /// Drop dictionary entries whose value is `NSNull`, at every depth.
    open var removesKeysWithNullValues: Bool {
        get { lock.withLock { removesNulls } }
        set { lock.withLock { removesNulls = newValue } }
    }

    open override func responseObject(for response: URLResponse?, data: Data?, error: NSErrorPointer) -> Any? {
        var validationError: NSError?
        do {
            try validate(response as? HTTPURLResponse, data: data)
        } catch let failure {
            validationError = failure as NSError
            // A body of the wrong type is not parsed.
            if AFErrorHasCode(
                validationError,
                NSURLErrorCannotDecodeContentData,
                in: AFURLResponseSerializationErrorDomain
            ) {
                error?.pointee = validationError
                return nil
            }
        }
        error?.pointee = validationError
        // Rails answers `head :ok` with one space.
        guard let data, !data.isEmpty, data != Data(" ".utf8) else { return nil }
        let object: Any
        do {
            object = try JSONSerialization.jsonObject(with: data, options: readingOptions)
        } catch let parsing {
            error?.pointee = AFError(Self.parsingFailure(parsing, response, data), underlying: validationError)
            return nil
        }
        return removesKeysWithNullValues ? Self.removingNulls(object, depth: 0) : object
    }

    private static func parsingFailure(_ error: any Error, _ response: URLResponse?, _ data: Data) -> NSError {
        let parsing = error as NSError
        var userInfo = parsing.userInfo
        userInfo[NSLocalizedDescriptionKey] =
            userInfo[NSLocalizedDescriptionKey] ?? "The response body is not JSON: \(error)"
        if let response = response as? HTTPURLResponse {
            userInfo[AFNetworkingOperationFailingURLResponseErrorKey] = response
        }
        userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] = data
        return NSError(domain: parsing.domain, code: parsing.code, userInfo: userInfo)
    }

    static func removingNulls(_ object: Any, depth: Int) -> Any {
        guard depth < 512 else { return object }
        if let array = object as? [Any] {
            return array.map { removingNulls($0, depth: depth + 1) }
        }
        if let dictionary = object as? [String: Any] {
            var result: [String: Any] = [:]
            for (key, value) in dictionary where !(value is NSNull) {
                result[key] = removingNulls(value, depth: depth + 1)
            }
            return result
        }
        return object
    }
}

/// AFNetworking's `AFCompoundResponseSerializer`: the first of its serializers that gives an
/// object wins; with none, the body as `Data` after this serializer's own validation.
open class AFCompoundResponseSerializer: AFHTTPResponseSerializer, @unchecked Sendable {
    private var serializers: [any AFURLResponseSerialization] = []

    /// The serializers tried, in order.
    open var responseSerializers: [any AFURLResponseSerialization] { lock.withLock { serializers } }

    /// `+compoundSerializerWithResponseSerializers:`.
    open class func compoundSerializer(
        withResponseSerializers responseSerializers: [any AFURLResponseSerialization]
    )
        -> AFCompoundResponseSerializer
    {
        let serializer = AFCompoundResponseSerializer()
        serializer.lock.withLock { serializer.serializers = responseSerializers }
        return serializer
    }

    open override func responseObject(for response: URLResponse?, data: Data?, error: NSErrorPointer) -> Any? {
        // As AFNetworking: only HTTP response serializers take part.
        for serializer in responseSerializers where serializer is AFHTTPResponseSerializer {
            var serializerError: NSError?
            if let object = serializer.responseObject(for: response, data: data, error: &serializerError) {
                error?.pointee = serializerError
                return object
            }
        }
        return super.responseObject(for: response, data: data, error: error)
    }
}
