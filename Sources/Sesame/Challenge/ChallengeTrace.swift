/// One challenge and how it was answered, as reported to ``SessionConfiguration/eventObserver``
/// (`sesame -v` prints one `* challenge` line per trace).
public struct ChallengeTrace: Sendable, CustomStringConvertible {
    /// Who answered.
    public enum Responder: String, Sendable, Hashable {
        /// The task's delegate answered, through `session(_:task:didReceive:)`.
        case taskDelegate = "task delegate"
        /// The session's delegate answered, through `session(_:didReceive:)`.
        case sessionDelegate = "session delegate"
        /// No delegate method answered: Sesame's default handling.
        case defaultHandling = "default handling"
        /// Used without asking: the request URL's user info.
        case urlUserInfo = "URL user info"
        /// Used without asking: the storage's default credential for the space.
        case storage = "credential storage"
        /// Used without asking: a `.netrc` entry.
        case netrc = ".netrc"
        /// Sent before any challenge, for a space that already succeeded in this session.
        case preemptive = "preemptive"
        /// Used without asking: the identity already chosen for this space in the session.
        case remembered = "remembered for the session"
        /// The challenge was not answered because the failure limit was reached.
        case failureLimit = "failure limit"
    }

    /// The protection space the challenge was for.
    public let protectionSpace: ProtectionSpace
    /// How many answers to this space had failed before this challenge.
    public let previousFailureCount: Int
    /// Who answered.
    public let responder: Responder
    /// The answer that was given.
    public let disposition: AuthChallengeDisposition
    /// The user name of the credential used, if any (never the password).
    public let user: String?
    /// The scheme as answered: "Basic", "Digest SHA-256", "Digest SHA-256 qop=auth, stale nonce
    /// renewed"; nil for TLS challenges.
    public let detail: String?
    /// The delegate method that answered, when a delegate did.
    public let delegateMethod: DelegateMethod?

    /// The two challenge methods a delegate can implement.
    public enum DelegateMethod: String, Sendable, Hashable {
        /// `session(_:task:didReceive:)` (`urlSession(_:task:didReceive:completionHandler:)`).
        case taskLevel = "task-level method"
        /// `session(_:didReceive:)` (`urlSession(_:didReceive:completionHandler:)`).
        case sessionLevel = "session-level method"
    }

    init(
        protectionSpace: ProtectionSpace,
        previousFailureCount: Int,
        responder: Responder,
        disposition: AuthChallengeDisposition,
        user: String?,
        detail: String? = nil,
        delegateMethod: DelegateMethod? = nil
    ) {
        self.protectionSpace = protectionSpace
        self.previousFailureCount = previousFailureCount
        self.responder = responder
        self.disposition = disposition
        self.user = user
        self.detail = detail
        self.delegateMethod = delegateMethod
    }

    public var description: String {
        let space = protectionSpace
        let name = space.host.utf8.contains(UInt8(ascii: ":")) ? "[\(space.host)]" : space.host
        let realm = space.realm.map { " realm=\"\($0)\"" } ?? ""
        let userText = user.map { " (user \($0))" } ?? ""
        let detailText = detail.map { " [\($0)]" } ?? ""
        let methodText = delegateMethod.map { " (\($0.rawValue))" } ?? ""
        return "\(space.authenticationMethod)\(realm) \(name):\(space.port) \(space.isProxy ? "proxy" : "server")"
            + " previousFailureCount=\(previousFailureCount) answered by \(responder.rawValue)\(methodText): \(disposition)\(userText)\(detailText)"
    }
}

extension ChallengeTrace {
    /// The same trace with another detail (what was actually sent, once it is known).
    func with(detail: String?) -> ChallengeTrace {
        ChallengeTrace(
            protectionSpace: protectionSpace,
            previousFailureCount: previousFailureCount,
            responder: responder,
            disposition: disposition,
            user: user,
            detail: detail,
            delegateMethod: delegateMethod
        )
    }
}

/// The traces of one party's challenges, recorded when each answer is given and drained by the
/// session for its observer. Off when nobody observes them (a trace costs a description of the
/// credential's scheme, on every preemptively authorized request).
struct ChallengeTraceLog: Sendable {
    var isOn: Bool
    private(set) var traces: [ChallengeTrace] = []

    init(isOn: Bool) { self.isOn = isOn }

    /// Records one answer. The count and detail are only worked out when traces are kept (a
    /// preemptive request would otherwise pay for a scheme summary and a failure look-up).
    mutating func record(
        _ space: ProtectionSpace,
        _ failures: @autoclosure () -> Int,
        _ responder: ChallengeTrace.Responder,
        _ disposition: AuthChallengeDisposition,
        _ user: String?,
        _ detail: @autoclosure () -> String?,
        method: ChallengeTrace.DelegateMethod? = nil
    ) {
        guard isOn else { return }
        let (failures, detail) = (failures(), detail())
        traces.append(
            ChallengeTrace(
                protectionSpace: space,
                previousFailureCount: failures,
                responder: responder,
                disposition: disposition,
                user: user,
                detail: detail,
                delegateMethod: method
            )
        )
    }

    /// Names what was actually sent for `space` in the last trace, when that trace answered it.
    mutating func amendLast(for space: ProtectionSpace, detail: String) {
        guard let last = traces.last, last.protectionSpace == space, last.disposition != .rejectProtectionSpace
        else { return }
        traces[traces.count - 1] = last.with(detail: detail)
    }

    /// Removes and returns the traces collected so far.
    mutating func drain() -> [ChallengeTrace] {
        defer { traces = [] }
        return traces
    }
}
