/// How a delegate answers a challenge: ``Session/AuthChallengeDisposition``.
public typealias AuthChallengeDisposition = Session.AuthChallengeDisposition

extension Session {
    /// How a delegate answers a challenge (`URLSession.AuthChallengeDisposition`), given with an
    /// optional ``Credential``.
    public enum AuthChallengeDisposition: Int, Sendable, Hashable, CustomStringConvertible {
        /// Answer with the credential given alongside. With no credential, the challenge goes on
        /// unanswered: a 401/407 response is delivered as is, a client-certificate request gets no
        /// certificate, and a server-trust challenge is rejected (Sesame fails closed).
        case useCredential
        /// Do what Sesame would do with no delegate: the proposed credential (URL user info, stored
        /// default, `.netrc`) once, standard trust evaluation, no client certificate.
        case performDefaultHandling
        /// Give up: the task fails with ``SesameError/Code/authenticationCancelled`` (or the TLS
        /// handshake is aborted).
        case cancelAuthenticationChallenge
        /// Do not answer this protection space; the next one the server offered is tried, and when none
        /// is left the response is delivered as is.
        case rejectProtectionSpace

        public var description: String {
            switch self {
            case .useCredential: "useCredential"
            case .performDefaultHandling: "performDefaultHandling"
            case .cancelAuthenticationChallenge: "cancelAuthenticationChallenge"
            case .rejectProtectionSpace: "rejectProtectionSpace"
            }
        }
    }
}
