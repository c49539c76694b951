import Foundation

/// The session-level delegate (`URLSessionDelegate`). Implement the completion-handler form or
/// the `async` form of each method; a method implemented in neither form is not called, and the
/// next one Apple's rule names is asked (ChallengeFlow.md in Sesame's documentation).
///
/// Methods are called on the session's `delegateQueue`. Unlike Apple's platforms, where
/// Objective-C dispatch finds any method a class has, a method a subclass adds to a superclass's
/// conformance is not seen: declare the conformance on the class that implements the method.
public protocol URLSessionDelegate: NSObjectProtocol {
    /// The session is invalid (after `finishTasksAndInvalidate` or `invalidateAndCancel`); the
    /// session releases its delegate after this call.
    func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?)

    /// Connection-level challenges (server trust, client certificates), and 401/407 challenges
    /// that no task-level method takes.
    func urlSession(
        _ session: URLSession,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    )

    func urlSession(
        _ session: URLSession,
        didReceive challenge: URLAuthenticationChallenge
    ) async -> (URLSession.AuthChallengeDisposition, URLCredential?)
}

extension URLSessionDelegate {
    /// Does nothing.
    public func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {}

    /// Missing in this form: the session then calls the `async` form.
    public func urlSession(
        _ session: URLSession,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        challenge.markMissing(.handler)
        completionHandler(.performDefaultHandling, nil)
    }

    /// Missing in this form either: the challenge goes to the next method.
    public func urlSession(
        _ session: URLSession,
        didReceive challenge: URLAuthenticationChallenge
    ) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        challenge.markMissing(.async)
        return (.performDefaultHandling, nil)
    }
}

/// Task-level callbacks (`URLSessionTaskDelegate`).
public protocol URLSessionTaskDelegate: URLSessionDelegate {
    /// 401 and 407 challenges, and connection-level ones the session-level method does not take.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    )

    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge
    ) async -> (URLSession.AuthChallengeDisposition, URLCredential?)

    /// A redirect: call the handler with the request to follow (as given or changed), or nil to
    /// receive the redirect response itself. Unlike corelibs, a 305 (Use Proxy) is not followed
    /// and reaches no redirect method, and a `HEAD` redirected with 303 stays `HEAD`.
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    )

    /// Request body bytes were sent: bytes sent now, in all, and expected in all (-1 when unknown).
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    )

    /// The task completed, with `error` when it failed; no other callback of the task follows.
    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?)
}

extension URLSessionTaskDelegate {
    /// Missing in this form: the session then calls the `async` form.
    public func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        challenge.markMissing(.handler)
        completionHandler(.performDefaultHandling, nil)
    }

    /// Missing in this form either: the challenge goes to the next method.
    public func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge
    ) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
        challenge.markMissing(.async)
        return (.performDefaultHandling, nil)
    }

    // The defaults below stand for a method the delegate does not implement: the session's
    // delegate is asked next, as Apple asks it (DelegateDispatch).

    public func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        guard !DelegateDispatch.reportMissing() else { return }
        completionHandler(request)
    }

    /// Does nothing.
    public func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) { _ = DelegateDispatch.reportMissing() }

    /// Does nothing.
    public func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        _ = DelegateDispatch.reportMissing()
    }
}

/// Data task callbacks (`URLSessionDataDelegate`).
public protocol URLSessionDataDelegate: URLSessionTaskDelegate {
    /// The response head arrived: call the handler with `.allow` to go on or `.cancel` to stop (the
    /// task then fails with `NSURLErrorCancelled`).
    func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    )

    /// A piece of the body arrived.
    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data)
}

extension URLSessionDataDelegate {
    /// Allows the response.
    public func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) {
        guard !DelegateDispatch.reportMissing() else { return }
        completionHandler(.allow)
    }

    /// Does nothing.
    public func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        _ = DelegateDispatch.reportMissing()
    }
}

/// Download task callbacks (`URLSessionDownloadDelegate`).
public protocol URLSessionDownloadDelegate: URLSessionTaskDelegate {
    /// The download is at `location`, a temporary file removed when this method returns: move it.
    func urlSession(_ session: URLSession, downloadTask: URLSessionDownloadTask, didFinishDownloadingTo location: URL)

    /// Bytes were written to the download's file: now, in all, and expected in all (-1 when
    /// unknown).
    func urlSession(
        _ session: URLSession,
        downloadTask: URLSessionDownloadTask,
        didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    )
}

extension URLSessionDownloadDelegate {
    /// Does nothing.
    public func urlSession(
        _ session: URLSession,
        downloadTask: URLSessionDownloadTask,
        didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) { _ = DelegateDispatch.reportMissing() }
}

/// Resumes a continuation once; later calls (a handler called twice) are ignored. Values are
/// handed from the delegate's queue to the waiting task, which is their only user after that.
final class Once<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `continuation` is taken under `lock`.
    private let lock = NSLock()
    private var continuation: CheckedContinuation<Value, Never>?

    init(_ continuation: CheckedContinuation<Value, Never>) { self.continuation = continuation }

    func resume(_ value: Value) {
        let taken = lock.withLock { () -> CheckedContinuation<Value, Never>? in
            defer { continuation = nil }
            return continuation
        }
        taken?.resume(returning: value)
    }
}
