import FoundationEssentials
import Glibc

/// What to do with a response whose head has arrived.
public enum ResponseDisposition: Sendable {
    /// Receive the body.
    case allow
    /// Cancel the task.
    case cancel
}

/// Callbacks about a session's tasks: the shapes of `URLSessionTaskDelegate` and
/// `URLSessionDataDelegate`, as `async` methods.
///
/// A task-level delegate (passed with a request) is asked first; when it does not implement a
/// method (the default implementation), the session's delegate is asked. Methods run on the Swift
/// concurrency pool, never on the event loop; they may suspend, and may call back into the session.
public protocol SessionTaskDelegate: SessionDelegate {
    /// A challenge for this task (401 and 407 challenges; session-wide ones too when the session
    /// delegate does not take them). Return the disposition and, for `.useCredential`, the
    /// credential. Missing: the session delegate is asked, then default handling.
    func session(
        _ session: Session,
        task: SessionTask,
        didReceive challenge: AuthenticationChallenge
    ) async -> (AuthChallengeDisposition, Credential?)

    /// The completion-handler form (the seeds' shape); call `completionHandler` exactly once.
    func session(
        _ session: Session,
        task: SessionTask,
        didReceive challenge: AuthenticationChallenge,
        completionHandler: @escaping @Sendable (AuthChallengeDisposition, Credential?) -> Void
    )

    /// A redirect arrived. Return the request to follow (as given, or changed), or nil to receive
    /// the redirect response itself.
    func session(
        _ session: Session,
        task: SessionTask,
        willPerformHTTPRedirection response: HTTPResponse,
        newRequest: HTTPRequest
    ) async -> HTTPRequest?

    /// The final response head arrived.
    func session(_ session: Session, task: SessionTask, didReceive response: HTTPResponse) async -> ResponseDisposition

    /// A piece of the body arrived.
    func session(_ session: Session, task: SessionTask, didReceive data: Data) async

    /// Request body bytes were written to the connection: `bytesSent` now, `totalBytesSent` in
    /// all for this task, out of `totalBytesExpectedToSend` (nil for a stream of unknown length).
    /// A body sent again (a redirect, a challenge) counts again.
    func session(
        _ session: Session,
        task: SessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64?
    ) async

    /// The task finished; `error` is nil on success.
    func session(_ session: Session, task: SessionTask, didCompleteWithError error: (any Error)?) async
}

extension SessionTaskDelegate {
    public func session(
        _ session: Session,
        task: SessionTask,
        willPerformHTTPRedirection response: HTTPResponse,
        newRequest: HTTPRequest
    ) async -> HTTPRequest? {
        await session.nextDelegate(after: self, for: task)?
            .session(session, task: task, willPerformHTTPRedirection: response, newRequest: newRequest)
            ?? newRequest
    }

    public func session(
        _ session: Session,
        task: SessionTask,
        didReceive response: HTTPResponse
    ) async -> ResponseDisposition {
        await session.nextDelegate(after: self, for: task)?.session(session, task: task, didReceive: response) ?? .allow
    }

    public func session(_ session: Session, task: SessionTask, didReceive data: Data) async {
        await session.nextDelegate(after: self, for: task)?.session(session, task: task, didReceive: data)
    }

    public func session(
        _ session: Session,
        task: SessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64?
    ) async {
        await session.nextDelegate(after: self, for: task)?
            .session(
                session,
                task: task,
                didSendBodyData: bytesSent,
                totalBytesSent: totalBytesSent,
                totalBytesExpectedToSend: totalBytesExpectedToSend
            )
    }

    public func session(_ session: Session, task: SessionTask, didCompleteWithError error: (any Error)?) async {
        await session.nextDelegate(after: self, for: task)?.session(session, task: task, didCompleteWithError: error)
    }
}
