// AFNetworking 4's Swift face over SesameNetworking: code written for AFNetworking changes only
// `import AFNetworking` to `import SesameAFNetworking`. URLSession, URLRequest, the challenge
// types and Security's trust functions come from SesameNetworking, re-exported here.
@_exported import SesameNetworking

// MARK: - Error domains and user-info keys (AFNetworking's strings)

/// Errors from response serializers (validation and parsing).
public let AFURLResponseSerializationErrorDomain = "com.alamofire.error.serialization.response"
/// The `HTTPURLResponse` a response serializer refused.
public let AFNetworkingOperationFailingURLResponseErrorKey = "com.alamofire.serialization.response.error.response"
/// The body (`Data`) of the response a response serializer refused.
public let AFNetworkingOperationFailingURLResponseDataErrorKey = "com.alamofire.serialization.response.error.data"
/// Errors from request serializers.
public let AFURLRequestSerializationErrorDomain = "com.alamofire.error.serialization.request"
/// The request a request serializer failed on.
public let AFNetworkingOperationFailingURLRequestErrorKey = "com.alamofire.serialization.request.error.response"

// MARK: - Notifications

/// AFNetworking's name for a resumed task's notification. Not posted: AFNetworking posts it from
/// swizzled `resume`, which Swift cannot do.
public let AFNetworkingTaskDidResumeNotification = Notification.Name("com.alamofire.networking.task.resume")
/// Posted when a task of a manager completes, with AFNetworking's `userInfo` keys.
public let AFNetworkingTaskDidCompleteNotification = Notification.Name("com.alamofire.networking.task.complete")
/// AFNetworking's name for a suspended task's notification. Not posted: AFNetworking posts it from
/// swizzled `suspend`, which Swift cannot do.
public let AFNetworkingTaskDidSuspendNotification = Notification.Name("com.alamofire.networking.task.suspend")
/// Posted when a manager's session becomes invalid; the object is the session.
public let AFURLSessionDidInvalidateNotification = Notification.Name("com.alamofire.networking.session.invalidate")
/// Posted when a download task's file was moved to where its destination block said.
public let AFURLSessionDownloadTaskDidMoveFileSuccessfullyNotification = Notification.Name(
    "com.alamofire.networking.session.download.file-manager-succeed"
)
/// Posted when a download task's file could not be moved to where its destination block said.
public let AFURLSessionDownloadTaskDidFailToMoveFileNotification = Notification.Name(
    "com.alamofire.networking.session.download.file-manager-error"
)

/// The response serializer of a completed task (in ``AFNetworkingTaskDidCompleteNotification``'s user info).
public let AFNetworkingTaskDidCompleteResponseSerializerKey =
    "com.alamofire.networking.task.complete.responseserializer"
/// The serialized response object.
public let AFNetworkingTaskDidCompleteSerializedResponseKey =
    "com.alamofire.networking.task.complete.serializedresponse"
/// The raw response body.
public let AFNetworkingTaskDidCompleteResponseDataKey = "com.alamofire.networking.complete.finish.responsedata"
/// The task's error, if any.
public let AFNetworkingTaskDidCompleteErrorKey = "com.alamofire.networking.task.complete.error"
/// Where a download task's file was moved.
public let AFNetworkingTaskDidCompleteAssetPathKey = "com.alamofire.networking.task.complete.assetpath"

/// `error` with `underlying` as its `NSUnderlyingErrorKey` (AFNetworking's
/// `AFErrorWithUnderlyingError`): the first error of a chain stays reachable from the last.
func AFError(_ error: NSError, underlying: NSError?) -> NSError {
    guard let underlying else { return error }
    guard error.userInfo[NSUnderlyingErrorKey] == nil else { return error }
    var userInfo = error.userInfo
    userInfo[NSUnderlyingErrorKey] = underlying
    return NSError(domain: error.domain, code: error.code, userInfo: userInfo)
}

/// True when `error` or an error under it has `code` in `domain`.
func AFErrorHasCode(_ error: NSError?, _ code: Int, in domain: String) -> Bool {
    var current = error
    var depth = 0
    while let error = current, depth < 16 {
        if error.domain == domain && error.code == code { return true }
        current = error.userInfo[NSUnderlyingErrorKey] as? NSError
        depth += 1
    }
    return false
}
