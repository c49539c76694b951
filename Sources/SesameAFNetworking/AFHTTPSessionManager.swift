import Sesame

/// AFNetworking's `AFHTTPSessionManager`: an ``AFURLSessionManager`` with a base URL, a request
/// serializer, and one method per HTTP verb that makes, resumes and returns the task, calling
/// `success` or `failure` on the completion queue.
///
/// ```
/// let manager = AFHTTPSessionManager(baseURL: URL(string: "https://api.example/"))
/// manager.get("items", parameters: ["page": 2], headers: nil, progress: nil,
///             success: { task, object in print(object ?? "") },
///             failure: { task, error in print(error) })
/// ```
open class AFHTTPSessionManager: AFURLSessionManager, @unchecked Sendable {
    /// The URL relative paths are resolved against (given a trailing `/` when its path has none).
    public let baseURL: URL?
    private var requestSerializerStorage = AFHTTPRequestSerializer()

    /// A manager resolving relative paths against `url` (given a trailing `/` when its path has
    /// none), on a session made with `configuration` (the default configuration when nil), with a
    /// JSON response serializer.
    public required init(baseURL url: URL?, sessionConfiguration configuration: URLSessionConfiguration?) {
        if let url, !url.path.isEmpty, !url.absoluteString.hasSuffix("/") {
            baseURL = url.appendingPathComponent("")
        } else {
            baseURL = url
        }
        super.init(sessionConfiguration: configuration)
        responseSerializer = AFJSONResponseSerializer()
    }

    /// A manager resolving relative paths against `url`, on a session with the default
    /// configuration.
    public convenience init(baseURL url: URL?) { self.init(baseURL: url, sessionConfiguration: nil) }

    public convenience override init(sessionConfiguration configuration: URLSessionConfiguration?) {
        self.init(baseURL: nil, sessionConfiguration: configuration)
    }

    public convenience init() { self.init(baseURL: nil, sessionConfiguration: nil) }

    /// `+manager`.
    open class func manager() -> Self { Self(baseURL: nil, sessionConfiguration: nil) }

    /// Makes every request (default: ``AFHTTPRequestSerializer``).
    open var requestSerializer: AFHTTPRequestSerializer {
        get { lock.withLock { requestSerializerStorage } }
        set { lock.withLock { requestSerializerStorage = newValue } }
    }

    /// As AFNetworking, a pinning policy is only taken with an `https` base URL: setting one
    /// otherwise stops the program (AFNetworking raises "Invalid Security Policy"), since its pins
    /// would protect nothing.
    open override var securityPolicy: AFSecurityPolicy {
        get { super.securityPolicy }
        set {
            if newValue.sslPinningMode != .none, baseURL?.scheme?.lowercased() != "https" {
                // safe: AFNetworking's contract (an exception); a pinning policy on a manager without
                // an https base URL is a programming error that would otherwise pin nothing.
                preconditionFailure(
                    "Invalid Security Policy: a security policy configured with \(newValue.sslPinningMode) pinning can only be applied on a manager with a secure base URL (i.e. https)"
                )
            }
            super.securityPolicy = newValue
        }
    }

    // MARK: - Verbs

    /// Makes and resumes a `GET` task: `parameters` go in the query; `success` gets the serialized
    /// response object, `failure` the error (the task is nil when no request could be made).
    @discardableResult
    open func get(
        _ URLString: String,
        parameters: Any?,
        headers: [String: String]?,
        progress downloadProgress: ((Progress) -> Void)?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        resumed(
            dataTask(
                withHTTPMethod: "GET",
                urlString: URLString,
                parameters: parameters,
                headers: headers,
                uploadProgress: nil,
                downloadProgress: downloadProgress,
                success: success,
                failure: failure
            )
        )
    }

    /// Makes and resumes a `HEAD` task: `parameters` go in the query; `success` gets the task once
    /// the response head arrived.
    @discardableResult
    open func head(
        _ URLString: String,
        parameters: Any?,
        headers: [String: String]?,
        success: ((URLSessionDataTask) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        resumed(
            dataTask(
                withHTTPMethod: "HEAD",
                urlString: URLString,
                parameters: parameters,
                headers: headers,
                uploadProgress: nil,
                downloadProgress: nil,
                success: success.map { success in { task, _ in success(task) } },
                failure: failure
            )
        )
    }

    /// Makes and resumes a `POST` task: `parameters` go in the body as the request serializer
    /// writes them (a form, or JSON).
    @discardableResult
    open func post(
        _ URLString: String,
        parameters: Any?,
        headers: [String: String]?,
        progress uploadProgress: ((Progress) -> Void)?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        resumed(
            dataTask(
                withHTTPMethod: "POST",
                urlString: URLString,
                parameters: parameters,
                headers: headers,
                uploadProgress: uploadProgress,
                downloadProgress: nil,
                success: success,
                failure: failure
            )
        )
    }

    /// A multipart POST: `parameters` as fields, then the parts `block` appends; files are read
    /// from disk as the body is sent.
    @discardableResult
    open func post(
        _ URLString: String,
        parameters: Any?,
        headers: [String: String]?,
        constructingBodyWith block: ((any AFMultipartFormData) -> Void)?,
        progress uploadProgress: ((Progress) -> Void)?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        var serializationError: NSError?
        let fields: [String: Any]?
        switch parameters.map(AFQueryString.unwrapped) {
        case nil: fields = nil
        case let value? where AFQueryString.isNull(value): fields = nil
        case let value?:
            fields = AFQueryString.dictionary(value)
            if fields == nil {
                serializationError = AFRequestError.invalidParameters(
                    "multipart parameters must be a dictionary, not \(type(of: value))"
                )
            }
        }
        var formError: NSError?
        var request = requestSerializer.multipartFormRequest(
            withMethod: "POST",
            urlString: absolute(URLString),
            parameters: fields,
            constructingBodyWith: block,
            error: &formError
        )
        for (field, value) in headers ?? [:] { request.setValue(value, forHTTPHeaderField: field) }
        if let serializationError = serializationError ?? formError {
            fail(failure, serializationError)
            return nil
        }
        var task: URLSessionDataTask?
        task = uploadTask(withStreamedRequest: request, progress: uploadProgress) { [weak self] _, object, error in
            self?.finish(task, object, error, success, failure)
        }
        return resumed(task)
    }

    /// Makes and resumes a `PUT` task: `parameters` go in the body as the request serializer writes
    /// them.
    @discardableResult
    open func put(
        _ URLString: String,
        parameters: Any?,
        headers: [String: String]?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        verb("PUT", URLString, parameters, headers, success, failure)
    }

    /// Makes and resumes a `PATCH` task: `parameters` go in the body as the request serializer
    /// writes them.
    @discardableResult
    open func patch(
        _ URLString: String,
        parameters: Any?,
        headers: [String: String]?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        verb("PATCH", URLString, parameters, headers, success, failure)
    }

    /// Makes and resumes a `DELETE` task: `parameters` go in the query.
    @discardableResult
    open func delete(
        _ URLString: String,
        parameters: Any?,
        headers: [String: String]?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        verb("DELETE", URLString, parameters, headers, success, failure)
    }

    /// A task for any method, not resumed: the request is made by ``requestSerializer`` from the
    /// URL string resolved against ``baseURL``, then `headers` are set on it. When the request
    /// cannot be made, `failure` gets the error (with a nil task) and nil is returned.
    open func dataTask(
        withHTTPMethod method: String,
        urlString URLString: String,
        parameters: Any?,
        headers: [String: String]?,
        uploadProgress: ((Progress) -> Void)?,
        downloadProgress: ((Progress) -> Void)?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        var request: URLRequest
        do {
            request = try requestSerializer.request(
                withMethod: method,
                urlString: absolute(URLString),
                parameters: parameters
            )
        } catch {
            fail(failure, error)
            return nil
        }
        for (field, value) in headers ?? [:] { request.setValue(value, forHTTPHeaderField: field) }
        var task: URLSessionDataTask?
        task = dataTask(with: request, uploadProgress: uploadProgress, downloadProgress: downloadProgress) {
            [weak self] _, object, error in
            self?.finish(task, object, error, success, failure)
        }
        return task
    }

    // MARK: - Helpers

    private func verb(
        _ method: String,
        _ URLString: String,
        _ parameters: Any?,
        _ headers: [String: String]?,
        _ success: ((URLSessionDataTask, Any?) -> Void)?,
        _ failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        resumed(
            dataTask(
                withHTTPMethod: method,
                urlString: URLString,
                parameters: parameters,
                headers: headers,
                uploadProgress: nil,
                downloadProgress: nil,
                success: success,
                failure: failure
            )
        )
    }

    /// `URLString` resolved against the base URL, as AFNetworking does (`URLWithString:relativeToURL:`).
    private func absolute(_ URLString: String) -> String {
        // An empty string is the base URL itself (Foundation on Linux makes no URL of it).
        if URLString.isEmpty, let baseURL { return baseURL.absoluteString }
        return URL(string: URLString, relativeTo: baseURL)?.absoluteString ?? URLString
    }

    private func resumed(_ task: URLSessionDataTask?) -> URLSessionDataTask? {
        task?.resume()
        return task
    }

    private func finish(
        _ task: URLSessionDataTask?,
        _ object: Any?,
        _ error: (any Error)?,
        _ success: ((URLSessionDataTask, Any?) -> Void)?,
        _ failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) {
        if let error {
            failure?(task, error)
        } else if let task {
            success?(task, object)
        }
    }

    private func fail(_ failure: ((URLSessionDataTask?, any Error) -> Void)?, _ error: any Error) {
        guard let failure else { return }
        let call = UncheckedFailure(failure: failure, error: error)
        (completionQueue ?? .main).async(group: completionGroup) { call.failure(nil, call.error) }
    }
}

private struct UncheckedFailure: @unchecked Sendable {
    // @unchecked: handed to the completion queue, called there once.
    let failure: (URLSessionDataTask?, any Error) -> Void
    let error: any Error
}
