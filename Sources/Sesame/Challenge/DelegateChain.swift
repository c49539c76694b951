/// Who is asked about a challenge, in order: the delegate methods of Apple's routing rule
/// (ChallengeFlow.md, "Who is asked"), then default handling.
///
/// - Connection-level challenges (server trust, client certificate, Negotiate, NTLM): the session
///   delegate's session-level method; when it is missing, the task-level method of the
///   task that opened the connection (the task's own delegate, then the session delegate's).
/// - HTTP challenges (401, 407): the task-level method (the task's own delegate, then the session
///   delegate's); when neither implements it, the session delegate's session-level method (seed
///   000, Listing 4-1, answers Basic there; Apple's current platforms deliver the 401 instead).
///
/// A task delegate's session-level method is never asked, as on Apple's platforms. A method the
/// delegate does not implement is Sesame's default implementation: it tells the walker so at once
/// (no answer is counted, no user code runs), and the next entry is asked.
struct DelegateChain: Sendable, Equatable {
    /// One delegate method.
    struct Entry: Sendable, Equatable {
        enum Owner: Sendable, Equatable {
            /// The task's own delegate (`SessionTask.delegate`, when it is not the session's).
            case taskDelegate
            case sessionDelegate
        }
        let owner: Owner
        let method: ChallengeTrace.DelegateMethod

        var responder: ChallengeTrace.Responder { owner == .taskDelegate ? .taskDelegate : .sessionDelegate }
    }

    let entries: [Entry]

    private static let taskTask = Entry(owner: .taskDelegate, method: .taskLevel)
    private static let sessionTask = Entry(owner: .sessionDelegate, method: .taskLevel)
    private static let sessionSession = Entry(owner: .sessionDelegate, method: .sessionLevel)
    private static let connectionLevel = [sessionSession, taskTask, sessionTask]
    private static let httpLevel = [taskTask, sessionTask, sessionSession]

    /// The chain for a challenge of `method`. `hasTaskDelegate` is true when the task has a delegate
    /// of its own (not the session's); `hasTask` is false for a handshake no task is waiting for.
    static func route(
        _ method: AuthenticationMethod,
        hasTask: Bool,
        hasTaskDelegate: Bool,
        hasSessionDelegate: Bool
    ) -> DelegateChain {
        let all = method.isSessionWide ? connectionLevel : httpLevel
        if hasTask && hasTaskDelegate && hasSessionDelegate { return DelegateChain(entries: all) }
        return DelegateChain(
            entries: all.filter { entry in
                switch (entry.owner, entry.method) {
                case (.taskDelegate, _): hasTask && hasTaskDelegate
                case (.sessionDelegate, .taskLevel): hasTask && hasSessionDelegate
                case (.sessionDelegate, .sessionLevel): hasSessionDelegate
                }
            }
        )
    }
}

/// A walk along a ``DelegateChain``: the next entry to ask, until one answers.
struct DelegateWalk: Sendable {
    let chain: DelegateChain
    private var position = 0

    init(_ chain: DelegateChain) { self.chain = chain }

    mutating func next() -> DelegateChain.Entry? {
        guard position < chain.entries.count else { return nil }
        defer { position += 1 }
        return chain.entries[position]
    }
}

/// What one delegate method said about a challenge.
enum DelegateAnswer: Sendable {
    /// The delegate does not implement the method (Sesame's default ran): ask the next one.
    case methodMissing
    case answered(AuthChallengeDisposition, Credential?)
}
