import Foundation
import Sesame

/// Sesame's delegate for a URLSession: passes each Sesame callback to the Apple-style delegate on
/// the session's queue, and tells Sesame when that delegate does not implement a method, so that
/// Sesame's routing rule (Apple's) asks the next one.
final class SessionBridge: SessionTaskDelegate, @unchecked Sendable {
    // @unchecked: `owner` is a weak reference set once, before any task starts.
    weak var owner: URLSession?

    /// The session-level method of the session's delegate.
    func session(
        _ session: Session,
        didReceive challenge: AuthenticationChallenge
    ) async -> (SesameDisposition, Credential?) {
        guard let owner, let delegate = owner.delegate else { return Self.methodMissing(challenge) }
        let wrapped = URLAuthenticationChallenge(challenge)
        let call = UncheckedBox(delegate)
        let answer: Answer = await owner.onQueue(answering: { reply in
            call.value.urlSession(owner, didReceive: wrapped) { reply(Answer($0, $1)) }
        })
        guard wrapped.isMissing(.handler) else { return answer.sesame }
        let asynchronous = await call.value.urlSession(owner, didReceive: wrapped)
        guard !wrapped.isMissing(.async) else { return Self.methodMissing(challenge) }
        return Answer(asynchronous).sesame
    }

    /// The task-level method of the session's delegate.
    func session(
        _ session: Session,
        task: SessionTask,
        didReceive challenge: AuthenticationChallenge
    ) async -> (SesameDisposition, Credential?) {
        guard let owner, let appleTask = (task.delegate as? TaskBridge)?.task,
            let delegate = owner.delegate as? any URLSessionTaskDelegate
        else { return Self.methodMissing(challenge) }
        return await Self.askTaskLevel(delegate, owner, appleTask, challenge)
    }

    static func askTaskLevel(
        _ delegate: any URLSessionTaskDelegate,
        _ owner: URLSession,
        _ task: URLSessionTask,
        _ challenge: AuthenticationChallenge
    ) async -> (SesameDisposition, Credential?) {
        let wrapped = URLAuthenticationChallenge(challenge)
        let call = UncheckedBox(delegate)
        let answer: Answer = await owner.onQueue(answering: { reply in
            call.value.urlSession(owner, task: task, didReceive: wrapped) { reply(Answer($0, $1)) }
        })
        guard wrapped.isMissing(.handler) else { return answer.sesame }
        let asynchronous = await call.value.urlSession(owner, task: task, didReceive: wrapped)
        guard !wrapped.isMissing(.async) else { return methodMissing(challenge) }
        return Answer(asynchronous).sesame
    }

    static func methodMissing(_ challenge: AuthenticationChallenge) -> (SesameDisposition, Credential?) {
        challenge.markMethodMissing()
        return (.performDefaultHandling, nil)
    }

}

/// A delegate's answer to a challenge, as Sesame takes it.
struct Answer: Sendable {
    let disposition: URLSession.AuthChallengeDisposition
    let credential: URLCredential?

    init(_ disposition: URLSession.AuthChallengeDisposition, _ credential: URLCredential?) {
        self.disposition = disposition
        self.credential = credential
    }

    /// What an `async` challenge method returned.
    init(_ returned: (URLSession.AuthChallengeDisposition, URLCredential?)) { self.init(returned.0, returned.1) }

    var sesame: (SesameDisposition, Credential?) {
        let mapped: SesameDisposition =
            switch disposition {
            case .useCredential: .useCredential
            case .performDefaultHandling: .performDefaultHandling
            case .cancelAuthenticationChallenge: .cancelAuthenticationChallenge
            case .rejectProtectionSpace: .rejectProtectionSpace
            }
        return (mapped, credential?.sesame)
    }
}

/// Sesame's task delegate for one URLSession task: its own delegate's challenge method, the
/// redirect decision, and (for tasks without a completion handler) the response, data and
/// completion callbacks.
final class TaskBridge: SessionTaskDelegate, @unchecked Sendable {
    // @unchecked: `owner` and `task` are set once; the task outlives the Sesame task it drives.
    weak var owner: URLSession?
    let task: URLSessionTask

    init(owner: URLSession, task: URLSessionTask) {
        self.owner = owner
        self.task = task
    }

    /// The task-level method of the task's own delegate.
    func session(
        _ session: Session,
        task sesameTask: SessionTask,
        didReceive challenge: AuthenticationChallenge
    ) async -> (SesameDisposition, Credential?) {
        guard let owner, let delegate = task.delegate else { return SessionBridge.methodMissing(challenge) }
        return await SessionBridge.askTaskLevel(delegate, owner, task, challenge)
    }

    func session(
        _ session: Session,
        task sesameTask: SessionTask,
        willPerformHTTPRedirection response: HTTPResponse,
        newRequest: HTTPRequest
    ) async -> HTTPRequest? {
        guard let owner else { return newRequest }
        let delegates = owner.delegates(for: task, as: (any URLSessionTaskDelegate).self)
        guard !delegates.isEmpty else { return newRequest }
        let timeout = task.originalRequest?.timeoutInterval ?? 60
        let proposed = URLRequest(newRequest, timeoutInterval: timeout)
        let call = UncheckedBox((delegates, task, HTTPURLResponse.make(response)))
        let decided: URLRequest? = await owner.onQueue(answering: { answer in
            let (delegates, task, response) = call.value
            let answered = DelegateDispatch.first(delegates) {
                $0.urlSession(owner, task: task, willPerformHTTPRedirection: response, newRequest: proposed) {
                    answer($0)
                }
            }
            if !answered { answer(proposed) }
        })
        guard let decided else { return nil }
        guard var request = try? decided.sesameRequest() else { return nil }
        if decided.httpBody == nil, decided.httpBodyStream == nil { request.body = newRequest.body }
        task.update(request: decided)
        return request
    }

    func session(
        _ session: Session,
        task sesameTask: SessionTask,
        didReceive response: HTTPResponse
    ) async
        -> ResponseDisposition
    {
        let apple = HTTPURLResponse.make(response)
        task.update(response: apple)
        guard let owner, let dataTask = task as? URLSessionDataTask else { return .allow }
        let delegates = owner.progressDelegates(for: task, as: (any URLSessionDataDelegate).self)
        guard !delegates.isEmpty else { return .allow }
        let call = UncheckedBox(delegates)
        let disposition: URLSession.ResponseDisposition = await owner.onQueue(answering: { answer in
            let answered = DelegateDispatch.first(call.value) {
                $0.urlSession(owner, dataTask: dataTask, didReceive: apple) { answer($0) }
            }
            if !answered { answer(.allow) }
        })
        return disposition == .cancel ? .cancel : .allow
    }

    func session(_ session: Session, task sesameTask: SessionTask, didReceive data: Data) async {
        task.add(received: data.count)
        if task.callsTaskDelegateForAsyncForm { task.gather(data) }
        guard let owner, let dataTask = task as? URLSessionDataTask else { return }
        let delegates = owner.progressDelegates(for: task, as: (any URLSessionDataDelegate).self)
        guard !delegates.isEmpty else { return }
        let call = UncheckedBox(delegates)
        await owner.onQueue {
            DelegateDispatch.first(call.value) { $0.urlSession(owner, dataTask: dataTask, didReceive: data) }
        }
    }

    func session(
        _ session: Session,
        task sesameTask: SessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64?
    ) async {
        // Apple's NSURLSessionTransferSizeUnknown for a body of unknown length.
        let expected = totalBytesExpectedToSend ?? -1
        task.update(sent: totalBytesSent, expected: expected)
        guard let owner else { return }
        let delegates = owner.delegates(for: task, as: (any URLSessionTaskDelegate).self)
        guard !delegates.isEmpty else { return }
        let call = UncheckedBox((delegates, task))
        await owner.onQueue {
            let (delegates, task) = call.value
            DelegateDispatch.first(delegates) {
                $0.urlSession(
                    owner,
                    task: task,
                    didSendBodyData: bytesSent,
                    totalBytesSent: totalBytesSent,
                    totalBytesExpectedToSend: expected
                )
            }
        }
    }

    func session(_ session: Session, task sesameTask: SessionTask, didCompleteWithError error: (any Error)?) async {
        guard let owner else { return }
        if let response = sesameTask.response, task.response == nil {
            task.update(response: HTTPURLResponse.make(response))
        }
        owner.finish(task, error: error.map { URLError.from($0, url: task.currentRequest?.url) })
    }
}
