/// A server's (or proxy's, or TLS handshake's) demand for a credential, as a delegate sees it
/// (`URLAuthenticationChallenge`).
public final class AuthenticationChallenge: Sendable {
    /// Where the answer applies.
    public let protectionSpace: ProtectionSpace
    /// The credential that would be used by default: the last one tried for this space in this
    /// task, or the storage's default, URL user info or `.netrc` entry.
    public let proposedCredential: Credential?
    /// Failed attempts so far for this protection space in this task, across schemes.
    public let previousFailureCount: Int
    /// The 401 or 407 response that carried the challenge (nil for TLS challenges).
    public let failureResponse: HTTPResponse?
    /// The error that made the last attempt fail, when there is one (such as a trust evaluation).
    public let error: (any Error)?
    /// Answers the challenge, for NSURLConnection-style code; see ``AuthenticationChallengeSender``.
    public let sender: (any AuthenticationChallengeSender)?

    /// The task the challenge arose in (nil for a handshake not tied to one task). Weak: a
    /// delegate that keeps challenges must not keep their tasks (and the tasks their delegate).
    var task: SessionTask? { taskReference.withLock { $0.task } }
    private let taskReference: LockedValue<WeakTask>

    private struct WeakTask {
        weak var task: SessionTask?
    }
    let answer = ChallengeAnswer()
    /// Set by Sesame's default implementation of a challenge method (a method the delegate does
    /// not implement): the chain goes on to the next method without counting this one as an answer.
    private let reachedDefault = LockedValue(false)

    /// Tells the session the delegate method just called is missing (for the
    /// compatibility modules' own defaults).
    package func markMethodMissing() { reachedDefault.withLock { $0 = true } }
    var methodMissingMarked: Bool { reachedDefault.withLock { $0 } }
    /// Whether the method just called was a default implementation; clears the mark for the next.
    func takeMethodMissing() -> Bool {
        reachedDefault.withLock { reached in
            defer { reached = false }
            return reached
        }
    }

    init(
        protectionSpace: ProtectionSpace,
        proposedCredential: Credential?,
        previousFailureCount: Int,
        failureResponse: HTTPResponse?,
        error: (any Error)?,
        task: SessionTask?
    ) {
        self.protectionSpace = protectionSpace
        self.proposedCredential = proposedCredential
        self.previousFailureCount = previousFailureCount
        self.failureResponse = failureResponse
        self.error = error
        taskReference = LockedValue(WeakTask(task: task))
        sender = ChallengeAnswerSender()
    }

    /// A challenge made outside a session's exchange (the compatibility modules' public
    /// initializers: a `URLProtocol` answering requests itself asks its own).
    package convenience init(
        protectionSpace: ProtectionSpace,
        proposedCredential: Credential?,
        previousFailureCount: Int,
        error: (any Error)?
    ) {
        self.init(
            protectionSpace: protectionSpace,
            proposedCredential: proposedCredential,
            previousFailureCount: previousFailureCount,
            failureResponse: nil,
            error: error,
            task: nil
        )
    }

    /// An HTTP challenge (401 or 407) for `task`.
    convenience init(
        _ space: ProtectionSpace,
        proposing proposed: Credential?,
        failures: Int,
        response: HTTPResponse?,
        task: SessionTask?
    ) {
        self.init(
            protectionSpace: space,
            proposedCredential: proposed,
            previousFailureCount: failures,
            failureResponse: response,
            error: nil,
            task: task
        )
    }
}
