import Foundation
import Sesame

/// Sesame's task delegate for one NSURLConnection: challenges to `willSendRequestFor` (or the
/// legacy pair), answered through the challenge's sender; redirects, response, data and the end
/// to the data delegate, where the connection delivers.
final class ConnectionBridge: SessionTaskDelegate, @unchecked Sendable {
    // @unchecked: the connection is set once; it is kept until the load ends.
    let connection: NSURLConnection

    init(_ connection: NSURLConnection) { self.connection = connection }

    func session(
        _ session: Session,
        task: SessionTask,
        didReceive challenge: AuthenticationChallenge
    ) async -> (SesameDisposition, Credential?) {
        guard let delegate = connection.delegate else { return SessionBridge.methodMissing(challenge) }
        let call = UncheckedBox(delegate)
        let connection = self.connection
        let answer: ConnectionChallengeSender.Reply = await withCheckedContinuation { continuation in
            let sender = ConnectionChallengeSender(Once(continuation), connection: connection)
            let wrapped = URLAuthenticationChallenge(challenge, sender: sender)
            Task {
                let asked = await connection.deliver { () -> Bool in
                    call.value.connection(connection, willSendRequestFor: wrapped)
                    guard wrapped.isMissing(.handler) else { return true }
                    // The legacy pair, when the delegate has no willSendRequestFor.
                    guard
                        call.value.connection(
                            connection,
                            canAuthenticateAgainstProtectionSpace: wrapped.protectionSpace
                        )
                    else { return false }
                    call.value.connection(connection, didReceive: wrapped)
                    return !wrapped.isMissing(.async)
                }
                // Missing (or declined): Sesame's default handling.
                if !asked { sender.answer(.performDefaultHandling, nil, methodMissing: true) }
            }
        }
        if answer.methodMissing { return SessionBridge.methodMissing(challenge) }
        return answer.value.sesame
    }

    func session(
        _ session: Session,
        task: SessionTask,
        willPerformHTTPRedirection response: HTTPResponse,
        newRequest: HTTPRequest
    ) async -> HTTPRequest? {
        guard let delegate = connection.delegate as? any NSURLConnectionDataDelegate else { return newRequest }
        let call = UncheckedBox(delegate)
        let (connection, redirect) = (self.connection, HTTPURLResponse.make(response))
        let proposed = URLRequest(newRequest, timeoutInterval: connection.originalRequest.timeoutInterval)
        let decided = await connection.deliver {
            call.value.connection(connection, willSend: proposed, redirectResponse: redirect)
        }
        guard let decided, var request = try? decided.sesameRequest() else { return nil }
        if decided.httpBody == nil, decided.httpBodyStream == nil { request.body = newRequest.body }
        connection.update(request: decided)
        return request
    }

    func session(_ session: Session, task: SessionTask, didReceive response: HTTPResponse) async -> ResponseDisposition
    {
        guard let delegate = connection.delegate as? any NSURLConnectionDataDelegate else { return .allow }
        let call = UncheckedBox(delegate)
        let (connection, apple) = (self.connection, HTTPURLResponse.make(response))
        await connection.deliver { call.value.connection(connection, didReceive: apple) }
        return .allow
    }

    func session(_ session: Session, task: SessionTask, didReceive data: Data) async {
        guard let delegate = connection.delegate as? any NSURLConnectionDataDelegate else { return }
        let call = UncheckedBox(delegate)
        let connection = self.connection
        await connection.deliver { call.value.connection(connection, didReceive: data) }
    }

    func session(_ session: Session, task: SessionTask, didCompleteWithError error: (any Error)?) async {
        await connection.finish(error)
    }
}

/// The sender of an NSURLConnection challenge: its answer is the delegate's answer.
final class ConnectionChallengeSender: NSObject, URLAuthenticationChallengeSender, @unchecked Sendable {
    // @unchecked: `once` takes the first answer under its lock; `connection` is immutable.
    struct Reply: Sendable {
        let value: Answer
        let methodMissing: Bool
    }

    private let once: Once<Reply>
    private let connection: NSURLConnection

    init(_ once: Once<Reply>, connection: NSURLConnection) {
        self.once = once
        self.connection = connection
    }

    func answer(
        _ disposition: URLSession.AuthChallengeDisposition,
        _ credential: URLCredential?,
        methodMissing: Bool = false
    ) {
        once.resume(Reply(value: Answer(disposition, credential), methodMissing: methodMissing))
    }

    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {
        answer(.useCredential, credential)
    }
    /// The 401 (or 407) is delivered as the response.
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) { answer(.useCredential, nil) }
    func cancel(_ challenge: URLAuthenticationChallenge) {
        connection.noteAuthenticationCancelled()
        answer(.cancelAuthenticationChallenge, nil)
    }
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) { answer(.performDefaultHandling, nil) }
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {
        answer(.rejectProtectionSpace, nil)
    }
}
