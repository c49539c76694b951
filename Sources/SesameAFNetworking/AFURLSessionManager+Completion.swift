import Sesame

extension AFURLSessionManager {
    // MARK: - Completion

    /// Serializes the response (or passes the error on) and calls the task's completion handler
    /// on the completion queue, then posts ``AFNetworkingTaskDidCompleteNotification``.
    func complete(_ task: URLSessionTask, in session: URLSession, error: (any Error)?) {
        guard let state = removeState(for: task) else { return }
        let failure: (any Error)? = state.challengeError ?? state.moveError ?? error
        let serializer = responseSerializer
        let response =
            task.response
            ?? URLResponse(
                url: task.currentRequest?.url ?? URL(fileURLWithPath: "/"),
                mimeType: nil,
                expectedContentLength: -1,
                textEncodingName: nil
            )
        var userInfo: [String: Any] = [AFNetworkingTaskDidCompleteResponseSerializerKey: serializer]
        var object: Any?
        var reported = failure
        if let file = state.downloadFileURL {
            userInfo[AFNetworkingTaskDidCompleteAssetPathKey] = file
        } else if !state.data.isEmpty || failure == nil {
            userInfo[AFNetworkingTaskDidCompleteResponseDataKey] = state.data
        }
        if failure == nil {
            var serializationError: NSError?
            let body = state.downloadCompletionHandler == nil ? state.data : nil
            object = serializer.responseObject(for: task.response, data: body, error: &serializationError)
            if let file = state.downloadFileURL { object = file }
            if let object { userInfo[AFNetworkingTaskDidCompleteSerializedResponseKey] = object }
            reported = serializationError
        }
        if let reported { userInfo[AFNetworkingTaskDidCompleteErrorKey] = reported }
        let call = UncheckedCompletion(state: state, response: response, object: object, error: reported)
        let notification = UncheckedCompletion(state: state, response: response, object: userInfo, error: nil)
        (completionQueue ?? .main).async(group: completionGroup) {
            call.run()
            DispatchQueue.main.async {
                NotificationCenter.default.post(
                    name: AFNetworkingTaskDidCompleteNotification,
                    object: task,
                    userInfo: notification.object as? [String: Any]
                )
            }
        }
        blocks.taskDidComplete?(session, task, failure)
    }
}

/// A completion handler call carried to the completion queue.
private struct UncheckedCompletion: @unchecked Sendable {
    // @unchecked: handed from the operation queue to the completion queue, used there once.
    let state: AFURLSessionTaskState
    let response: URLResponse
    let object: Any?
    let error: (any Error)?

    func run() {
        if let handler = state.downloadCompletionHandler {
            handler(response, error == nil ? state.downloadFileURL : nil, error)
        } else {
            state.completionHandler?(response, object, error)
        }
    }
}
