/// The answering side of a challenge (`URLAuthenticationChallengeSender`), for code written in the
/// NSURLConnection style that answers through `challenge.sender`.
///
/// A challenge takes the first answer it gets, from its sender or from the delegate's completion
/// handler or return value; later answers are ignored. So the seeds' habit of calling both
/// `challenge.sender?.cancel(challenge)` and `completionHandler(.cancelAuthenticationChallenge, nil)`
/// is harmless.
public protocol AuthenticationChallengeSender: Sendable {
    /// Answer with `credential`.
    func use(_ credential: Credential, for challenge: AuthenticationChallenge)
    /// Go on without a credential (the 401/407 response is delivered as is).
    func continueWithoutCredential(for challenge: AuthenticationChallenge)
    /// Cancel: the task fails with ``SesameError/Code/authenticationCancelled``.
    func cancel(_ challenge: AuthenticationChallenge)
    /// Default handling.
    func performDefaultHandling(for challenge: AuthenticationChallenge)
    /// Try the next protection space the server offered.
    func rejectProtectionSpaceAndContinue(with challenge: AuthenticationChallenge)
}

/// The sender Sesame attaches to every challenge: it resolves the challenge's single answer.
struct ChallengeAnswerSender: AuthenticationChallengeSender {
    func use(_ credential: Credential, for challenge: AuthenticationChallenge) {
        challenge.answer.resolve(.useCredential, credential)
    }
    func continueWithoutCredential(for challenge: AuthenticationChallenge) {
        challenge.answer.resolve(.useCredential, nil)
    }
    func cancel(_ challenge: AuthenticationChallenge) {
        challenge.answer.resolve(.cancelAuthenticationChallenge, nil)
    }
    func performDefaultHandling(for challenge: AuthenticationChallenge) {
        challenge.answer.resolve(.performDefaultHandling, nil)
    }
    func rejectProtectionSpaceAndContinue(with challenge: AuthenticationChallenge) {
        challenge.answer.resolve(.rejectProtectionSpace, nil)
    }
}

/// One answer, given once, awaited by any number of waiters (each delegate level in a chain of
/// default implementations waits for the same answer).
final class ChallengeAnswer: Sendable {
    typealias Value = (AuthChallengeDisposition, Credential?)

    private struct State {
        var value: Value?
        var waiters: [CheckedContinuation<Value, Never>] = []
    }

    private let state = LockedValue(State())

    /// Records the answer unless one was already given.
    func resolve(_ disposition: AuthChallengeDisposition, _ credential: Credential?) {
        let waiters = state.withLock { state -> [CheckedContinuation<Value, Never>] in
            guard state.value == nil else { return [] }
            state.value = (disposition, credential)
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: (disposition, credential)) }
    }

    /// The first answer given (waits for it).
    func value() async -> Value {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> Value? in
                if let value = state.value { return value }
                state.waiters.append(continuation)
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }

    /// The answer, if one was given.
    var current: Value? { state.withLock { $0.value } }
}
