/// One challenge and how it was answered, as reported to ``SessionConfiguration/eventObserver``
/// (`sesame -v` prints one `* challenge` line per trace).
public struct ChallengeTrace: Sendable, CustomStringConvertible {
    /// Who answered.
    public enum Responder: String, Sendable, Hashable {
        case taskDelegate = "task delegate"
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

    public let protectionSpace: ProtectionSpace
    public let previousFailureCount: Int
    public let responder: Responder
    public let disposition: AuthChallengeDisposition
    /// The user name of the credential used, if any (never the password).
    public let user: String?
    /// The scheme as answered: "Basic", "Digest SHA-256", "Digest SHA-256 qop=auth, stale nonce
    /// renewed"; nil for TLS challenges.
    public let detail: String?

    init(
        protectionSpace: ProtectionSpace,
        previousFailureCount: Int,
        responder: Responder,
        disposition: AuthChallengeDisposition,
        user: String?,
        detail: String? = nil
    ) {
        self.protectionSpace = protectionSpace
        self.previousFailureCount = previousFailureCount
        self.responder = responder
        self.disposition = disposition
        self.user = user
        self.detail = detail
    }

    public var description: String {
        let space = protectionSpace
        let name = space.host.utf8.contains(UInt8(ascii: ":")) ? "[\(space.host)]" : space.host
        let realm = space.realm.map { " realm=\"\($0)\"" } ?? ""
        let userText = user.map { " (user \($0))" } ?? ""
        let detailText = detail.map { " [\($0)]" } ?? ""
        return "\(space.authenticationMethod)\(realm) \(name):\(space.port) \(space.isProxy ? "proxy" : "server")"
            + " previousFailureCount=\(previousFailureCount) answered by \(responder.rawValue): \(disposition)\(userText)\(detailText)"
    }
}
