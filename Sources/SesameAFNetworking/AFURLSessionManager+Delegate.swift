import Sesame

/// A session challenge block: the disposition, and for `.useCredential` the credential in `credential?.pointee`.
public typealias AFURLSessionDidReceiveAuthenticationChallengeBlock = (
    URLSession, URLAuthenticationChallenge, AutoreleasingUnsafeMutablePointer<URLCredential?>?
) -> URLSession.AuthChallengeDisposition

/// A task challenge block, as the session one with the task.
public typealias AFURLSessionTaskDidReceiveAuthenticationChallengeBlock = (
    URLSession, URLSessionTask, URLAuthenticationChallenge, AutoreleasingUnsafeMutablePointer<URLCredential?>?
) -> URLSession.AuthChallengeDisposition

/// AFNetworking 4's challenge handler (see ``AFURLSessionManager/setAuthenticationChallengeHandler(_:)``).
public typealias AFURLSessionTaskAuthenticationChallengeHandler = (
    URLSession, URLSessionTask, URLAuthenticationChallenge,
    @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
) -> Any?

/// The blocks a manager's delegate methods consult (AFNetworking's `set…Block:` methods).
final class AFURLSessionManagerBlocks: @unchecked Sendable {
    // @unchecked: every block is behind `lock`.
    typealias SessionChallenge = AFURLSessionDidReceiveAuthenticationChallengeBlock
    typealias TaskChallenge = AFURLSessionTaskDidReceiveAuthenticationChallengeBlock
    typealias ChallengeHandler = AFURLSessionTaskAuthenticationChallengeHandler

    private let lock = NSLock()
    private var storage: [String: Any] = [:]

    func removeAll() { lock.withLock { storage.removeAll() } }

    subscript<Block>(_ name: String, as type: Block.Type) -> Block? {
        get { lock.withLock { storage[name] as? Block } }
        set { lock.withLock { storage[name] = newValue } }
    }

    var sessionChallenge: SessionChallenge? { self["sessionChallenge", as: SessionChallenge.self] }
    var taskChallenge: TaskChallenge? { self["taskChallenge", as: TaskChallenge.self] }
    var challengeHandler: ChallengeHandler? { self["challengeHandler", as: ChallengeHandler.self] }
    var taskDidComplete: ((URLSession, URLSessionTask, (any Error)?) -> Void)? {
        self["taskDidComplete", as: ((URLSession, URLSessionTask, (any Error)?) -> Void).self]
    }
}

extension AFURLSessionManager {
    // MARK: - Blocks

    /// Answers connection-level challenges (server trust, client certificates), and the others no
    /// task block takes: return the disposition, and for `.useCredential` set `credential?.pointee`.
    public func setSessionDidReceiveAuthenticationChallenge(
        _ block: AFURLSessionDidReceiveAuthenticationChallengeBlock?
    ) {
        blocks["sessionChallenge", as: AFURLSessionManagerBlocks.SessionChallenge.self] = block
    }

    /// Answers a task's challenges (401, 407, and connection-level ones the session block does not take).
    public func setTaskDidReceiveAuthenticationChallenge(
        _ block: AFURLSessionTaskDidReceiveAuthenticationChallengeBlock?
    ) {
        blocks["taskChallenge", as: AFURLSessionManagerBlocks.TaskChallenge.self] = block
    }

    /// AFNetworking 4's task challenge handler. Return a disposition (`NSNumber` of its raw value,
    /// or the disposition itself; `.performDefaultHandling` for a server trust lets
    /// ``securityPolicy`` decide), a `URLCredential` to use, an `NSError` to fail the task with, or
    /// nil after calling `completionHandler` yourself (once).
    public func setAuthenticationChallengeHandler(_ handler: AFURLSessionTaskAuthenticationChallengeHandler?) {
        blocks["challengeHandler", as: AFURLSessionManagerBlocks.ChallengeHandler.self] = handler
    }

    /// Called once the session is invalid, with the error that invalidated it, if any.
    public func setSessionDidBecomeInvalidBlock(_ block: ((URLSession, (any Error)?) -> Void)?) {
        blocks["sessionDidBecomeInvalid", as: ((URLSession, (any Error)?) -> Void).self] = block
    }

    /// Decides each redirect: return the request to follow, or nil to get the redirect response.
    public func setTaskWillPerformHTTPRedirectionBlock(
        _ block: ((URLSession, URLSessionTask, URLResponse, URLRequest) -> URLRequest?)?
    ) {
        blocks["redirect", as: ((URLSession, URLSessionTask, URLResponse, URLRequest) -> URLRequest?).self] = block
    }

    /// Called as request body bytes are sent: bytes sent now, in all, and expected in all.
    public func setTaskDidSendBodyDataBlock(_ block: ((URLSession, URLSessionTask, Int64, Int64, Int64) -> Void)?) {
        blocks["sent", as: ((URLSession, URLSessionTask, Int64, Int64, Int64) -> Void).self] = block
    }

    /// Called when any task completes, with its error, if any (before the task's own completion
    /// handler).
    public func setTaskDidComplete(_ block: ((URLSession, URLSessionTask, (any Error)?) -> Void)?) {
        blocks["taskDidComplete", as: ((URLSession, URLSessionTask, (any Error)?) -> Void).self] = block
    }

    /// Decides what happens to a data task's response head; without a block, the task goes on
    /// (`.allow`).
    public func setDataTaskDidReceiveResponseBlock(
        _ block: ((URLSession, URLSessionDataTask, URLResponse) -> URLSession.ResponseDisposition)?
    ) {
        blocks["response", as: ((URLSession, URLSessionDataTask, URLResponse) -> URLSession.ResponseDisposition).self] =
            block
    }

    /// Called with each piece of a data task's body as it arrives.
    public func setDataTaskDidReceiveDataBlock(_ block: ((URLSession, URLSessionDataTask, Data) -> Void)?) {
        blocks["data", as: ((URLSession, URLSessionDataTask, Data) -> Void).self] = block
    }

    /// Called as a download task writes its file: bytes written now, in all, and expected in all.
    public func setDownloadTaskDidWriteDataBlock(
        _ block: ((URLSession, URLSessionDownloadTask, Int64, Int64, Int64) -> Void)?
    ) {
        blocks["written", as: ((URLSession, URLSessionDownloadTask, Int64, Int64, Int64) -> Void).self] = block
    }

    /// Where a finished download goes, for downloads whose task gave no destination.
    public func setDownloadTaskDidFinishDownloadingBlock(_ block: ((URLSession, URLSessionDownloadTask, URL) -> URL?)?)
    {
        blocks["downloaded", as: ((URLSession, URLSessionDownloadTask, URL) -> URL?).self] = block
    }

    // MARK: - URLSessionDelegate

    func afURLSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        blocks["sessionDidBecomeInvalid", as: ((URLSession, (any Error)?) -> Void).self]?(session, error)
        NotificationCenter.default.post(name: AFURLSessionDidInvalidateNotification, object: session)
        if isRetired(session) { blocks.removeAll() }
    }

    /// Seed 004's session method: with a session block, its answer; without one the method is
    /// absent (as AFNetworking 4 tells URLSession), so the task method below decides.
    func afURLSession(
        _ session: URLSession,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        guard let block = blocks.sessionChallenge else {
            challenge.markMissing(.handler)
            return completionHandler(.performDefaultHandling, nil)
        }
        var credential: URLCredential?
        let disposition = block(session, challenge, &credential)
        completionHandler(disposition, credential)
    }

    // MARK: - URLSessionTaskDelegate

    func afURLSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        let isServerTrust = challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust
        var disposition = URLSession.AuthChallengeDisposition.performDefaultHandling
        var credential: URLCredential?
        var evaluatesServerTrust = false
        if let handler = blocks.challengeHandler {
            guard let result = handler(session, task, challenge, completionHandler) else { return }
            switch result {
            case let error as NSError where !(result is NSNumber):
                state(for: task)?.challengeError = error
                disposition = .cancelAuthenticationChallenge
            case let given as URLCredential:
                credential = given
                disposition = .useCredential
            case let given as URLSession.AuthChallengeDisposition:
                disposition = given
            case let number as NSNumber:
                disposition =
                    URLSession.AuthChallengeDisposition(rawValue: number.intValue) ?? .cancelAuthenticationChallenge
            default:
                // AFNetworking raises here; refusing the challenge fails closed.
                state(for: task)?.challengeError = NSError(
                    domain: NSURLErrorDomain,
                    code: NSURLErrorUserCancelledAuthentication,
                    userInfo: [
                        NSLocalizedDescriptionKey:
                            "The authentication challenge handler returned \(type(of: result)); it must return nil, an NSError, a URLCredential or a disposition."
                    ]
                )
                disposition = .cancelAuthenticationChallenge
            }
            evaluatesServerTrust = disposition == .performDefaultHandling && isServerTrust
        } else if let block = blocks.taskChallenge {
            disposition = block(session, task, challenge, &credential)
        } else if let block = blocks.sessionChallenge {
            disposition = block(session, challenge, &credential)
        } else {
            evaluatesServerTrust = isServerTrust
        }
        if evaluatesServerTrust, let trust = challenge.protectionSpace.serverTrust {
            let evaluation = securityPolicy.evaluation(of: trust, forDomain: challenge.protectionSpace.host)
            if evaluation.isTrusted {
                disposition = .useCredential
                credential = URLCredential(trust: trust)
            } else {
                state(for: task)?.challengeError = .serverTrustRefused(
                    trust,
                    url: task.currentRequest?.url,
                    reasons: evaluation.description
                )
                disposition = .cancelAuthenticationChallenge
            }
        }
        completionHandler(disposition, credential)
    }

    func afURLSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        guard
            let block = blocks[
                "redirect",
                as: ((URLSession, URLSessionTask, URLResponse, URLRequest) -> URLRequest?).self
            ]
        else { return completionHandler(request) }
        completionHandler(block(session, task, response, request))
    }

    func afURLSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        state(for: task)?.sent(total: totalBytesSent, expected: totalBytesExpectedToSend)
        blocks["sent", as: ((URLSession, URLSessionTask, Int64, Int64, Int64) -> Void).self]?(
            session,
            task,
            bytesSent,
            totalBytesSent,
            totalBytesExpectedToSend
        )
    }

    func afURLSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        complete(task, in: session, error: error)
    }

    // MARK: - URLSessionDataDelegate

    func afURLSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        typealias Block = (URLSession, URLSessionDataTask, URLResponse) -> URLSession.ResponseDisposition
        completionHandler(blocks["response", as: Block.self]?(session, dataTask, response) ?? .allow)
    }

    func afURLSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        if let state = state(for: dataTask) {
            state.data.append(data)
            state.received(total: Int64(state.data.count), expected: dataTask.countOfBytesExpectedToReceive)
        }
        blocks["data", as: ((URLSession, URLSessionDataTask, Data) -> Void).self]?(session, dataTask, data)
    }

    // MARK: - URLSessionDownloadDelegate

    func afURLSession(
        _ session: URLSession,
        downloadTask: URLSessionDownloadTask,
        didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {
        state(for: downloadTask)?.received(total: totalBytesWritten, expected: totalBytesExpectedToWrite)
        blocks["written", as: ((URLSession, URLSessionDownloadTask, Int64, Int64, Int64) -> Void).self]?(
            session,
            downloadTask,
            bytesWritten,
            totalBytesWritten,
            totalBytesExpectedToWrite
        )
    }

    /// Moves the file where the task's destination (or the manager's block) says, before URLSession
    /// removes it. A failed move is the task's error, and is announced with
    /// ``AFURLSessionDownloadTaskDidFailToMoveFileNotification``.
    func afURLSession(
        _ session: URLSession,
        downloadTask: URLSessionDownloadTask,
        didFinishDownloadingTo location: URL
    ) {
        let state = state(for: downloadTask)
        let target: URL?
        if let destination = state?.destination, let response = downloadTask.response {
            target = destination(location, response)
        } else {
            target = blocks["downloaded", as: ((URLSession, URLSessionDownloadTask, URL) -> URL?).self]?(
                session,
                downloadTask,
                location
            )
        }
        guard let target else { return }
        do {
            try FileManager.default.moveItem(at: location, to: target)
            state?.downloadFileURL = target
            NotificationCenter.default.post(
                name: AFURLSessionDownloadTaskDidMoveFileSuccessfullyNotification,
                object: downloadTask
            )
        } catch {
            let failure = error as NSError
            state?.moveError = failure
            NotificationCenter.default.post(
                name: AFURLSessionDownloadTaskDidFailToMoveFileNotification,
                object: downloadTask,
                userInfo: failure.userInfo
            )
        }
    }
}
