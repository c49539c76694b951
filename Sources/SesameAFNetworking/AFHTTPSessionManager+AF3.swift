import Sesame

/// AFNetworking 3's verbs, without `headers:` (AFNetworking 4 added it): code written for 3.x
/// compiles as it is. Each is the AFNetworking 4 method with no extra headers.
extension AFHTTPSessionManager {
    /// AFNetworking 3's `GET`: the AFNetworking 4 method with no extra headers.
    @discardableResult
    public func get(
        _ URLString: String,
        parameters: Any?,
        progress downloadProgress: ((Progress) -> Void)?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        get(
            URLString,
            parameters: parameters,
            headers: nil,
            progress: downloadProgress,
            success: success,
            failure: failure
        )
    }

    /// AFNetworking 3's `HEAD`: the AFNetworking 4 method with no extra headers.
    @discardableResult
    public func head(
        _ URLString: String,
        parameters: Any?,
        success: ((URLSessionDataTask) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        head(URLString, parameters: parameters, headers: nil, success: success, failure: failure)
    }

    /// AFNetworking 3's `POST`: the AFNetworking 4 method with no extra headers.
    @discardableResult
    public func post(
        _ URLString: String,
        parameters: Any?,
        progress uploadProgress: ((Progress) -> Void)?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        post(
            URLString,
            parameters: parameters,
            headers: nil,
            progress: uploadProgress,
            success: success,
            failure: failure
        )
    }

    /// AFNetworking 3's multipart `POST`: the AFNetworking 4 method with no extra headers.
    @discardableResult
    public func post(
        _ URLString: String,
        parameters: Any?,
        constructingBodyWith block: ((any AFMultipartFormData) -> Void)?,
        progress uploadProgress: ((Progress) -> Void)?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        post(
            URLString,
            parameters: parameters,
            headers: nil,
            constructingBodyWith: block,
            progress: uploadProgress,
            success: success,
            failure: failure
        )
    }

    /// AFNetworking 3's `PUT`: the AFNetworking 4 method with no extra headers.
    @discardableResult
    public func put(
        _ URLString: String,
        parameters: Any?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        put(URLString, parameters: parameters, headers: nil, success: success, failure: failure)
    }

    /// AFNetworking 3's `PATCH`: the AFNetworking 4 method with no extra headers.
    @discardableResult
    public func patch(
        _ URLString: String,
        parameters: Any?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        patch(URLString, parameters: parameters, headers: nil, success: success, failure: failure)
    }

    /// AFNetworking 3's `DELETE`: the AFNetworking 4 method with no extra headers.
    @discardableResult
    public func delete(
        _ URLString: String,
        parameters: Any?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        delete(URLString, parameters: parameters, headers: nil, success: success, failure: failure)
    }

    // AFNetworking 3.0's verbs without `progress:`, deprecated there for the ones above but common
    // in Swift apps written against it.

    /// AFNetworking 3.0's `GET` without a progress block (deprecated there, common in Swift apps).
    @discardableResult
    public func get(
        _ URLString: String,
        parameters: Any?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        get(URLString, parameters: parameters, headers: nil, progress: nil, success: success, failure: failure)
    }

    /// AFNetworking 3.0's `POST` without a progress block (deprecated there, common in Swift apps).
    @discardableResult
    public func post(
        _ URLString: String,
        parameters: Any?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        post(URLString, parameters: parameters, headers: nil, progress: nil, success: success, failure: failure)
    }

    /// AFNetworking 3.0's multipart `POST` without a progress block (deprecated there, common in
    /// Swift apps).
    @discardableResult
    public func post(
        _ URLString: String,
        parameters: Any?,
        constructingBodyWith block: ((any AFMultipartFormData) -> Void)?,
        success: ((URLSessionDataTask, Any?) -> Void)?,
        failure: ((URLSessionDataTask?, any Error) -> Void)?
    ) -> URLSessionDataTask? {
        post(
            URLString,
            parameters: parameters,
            headers: nil,
            constructingBodyWith: block,
            progress: nil,
            success: success,
            failure: failure
        )
    }
}
