/// The session-level delegate (`URLSessionDelegate`): challenges that concern a whole connection
/// (server trust, client certificates, Negotiate, NTLM), and the last stop for other challenges
/// that no task-level method answered (so the seeds' Listing 4-1, written at session level, also
/// answers Basic challenges).
///
/// Implement either the `async` method or the completion-handler method (the seeds' shape); with
/// neither, a connection-level challenge goes to the task-level method of the task that opened the
/// connection, when there is one, and from there to default handling (see ChallengeFlow.md).
/// Methods run on the Swift concurrency pool, never on Sesame's event loop; a TLS handshake waits
/// for the answer without using CPU.
public protocol SessionDelegate: AnyObject, Sendable {
    /// A session-wide challenge; return the disposition and, for `.useCredential`, the credential.
    func session(
        _ session: Session,
        didReceive challenge: AuthenticationChallenge
    ) async -> (AuthChallengeDisposition, Credential?)

    /// The completion-handler form; call `completionHandler` exactly once, from any thread.
    func session(
        _ session: Session,
        didReceive challenge: AuthenticationChallenge,
        completionHandler: @escaping @Sendable (AuthChallengeDisposition, Credential?) -> Void
    )
}

extension SessionDelegate {
    public func session(
        _ session: Session,
        didReceive challenge: AuthenticationChallenge
    ) async -> (AuthChallengeDisposition, Credential?) {
        self.session(session, didReceive: challenge, completionHandler: challenge.answer.resolve)
        // Neither form is implemented: the session asks the next method in its chain.
        if challenge.methodMissingMarked { return (.performDefaultHandling, nil) }
        return await challenge.answer.value()
    }

    public func session(
        _ session: Session,
        didReceive challenge: AuthenticationChallenge,
        completionHandler: @escaping @Sendable (AuthChallengeDisposition, Credential?) -> Void
    ) {
        challenge.markMethodMissing()
    }
}

extension SessionTaskDelegate {
    public func session(
        _ session: Session,
        task: SessionTask,
        didReceive challenge: AuthenticationChallenge
    ) async -> (AuthChallengeDisposition, Credential?) {
        self.session(session, task: task, didReceive: challenge, completionHandler: challenge.answer.resolve)
        if challenge.methodMissingMarked { return (.performDefaultHandling, nil) }
        return await challenge.answer.value()
    }

    public func session(
        _ session: Session,
        task: SessionTask,
        didReceive challenge: AuthenticationChallenge,
        completionHandler: @escaping @Sendable (AuthChallengeDisposition, Credential?) -> Void
    ) {
        challenge.markMethodMissing()
    }
}
