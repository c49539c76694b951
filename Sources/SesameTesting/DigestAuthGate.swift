import FoundationEssentials
import Sesame

/// A scripted HTTP Digest protection (RFC 7616) for ``LocalServer`` handlers: challenges with the
/// configured algorithm and qop, checks answers (nonce issued here, nonce count increasing,
/// response right), marks nonces stale after a number of uses, and answers with
/// `Authentication-Info` (a right or deliberately wrong `rspauth`, optionally a `nextnonce`).
public final class DigestAuthGate: Sendable {
    /// How the gate challenges and what it checks.
    public struct Options: Sendable {
        /// The `realm` parameter.
        public var realm = "Sesame Digest"
        /// The `algorithm` parameter (also `-sess` forms); nil sends none (MD5).
        public var algorithm: String? = "SHA-256"
        /// The `qop` parameter; nil for an RFC 2069 challenge.
        public var qop: String? = "auth"
        /// The `userhash` parameter: when true, answers must send the user name hashed.
        public var userhash = false
        /// A nonce answers this many requests, then is stale.
        public var nonceUses = Int.max
        /// Whether `Authentication-Info` carries an `rspauth`, and whether it is right.
        public var rspauth: RspauthMode = .correct
        /// Whether `Authentication-Info` hands out a `nextnonce`.
        public var sendsNextnonce = false
        /// Challenges offered before the Digest one (such as another algorithm, or Basic).
        public var otherChallenges: [String] = []

        /// The defaults: SHA-256, qop `auth`, a right `rspauth`, nonces that never go stale.
        public init() {}
    }

    /// What `Authentication-Info` says about the server's own proof.
    public enum RspauthMode: Sendable {
        /// No `rspauth`.
        case none
        /// The right `rspauth` for the request.
        case correct
        /// An `rspauth` that does not match, as an impostor would send.
        case wrong
    }

    private struct NonceState {
        var uses = 0
        var lastCount = 0
    }

    /// How the gate challenges.
    public let options: Options
    /// The accepted users and their passwords.
    public let users: [String: String]
    private let nonces = LockedValue<[String: NonceState]>([:])
    private let algorithm: DigestAlgorithm

    /// - Throws: ``TestingError`` when `options.algorithm` is not one Sesame implements.
    public init(users: [String: String], options: Options = Options()) throws {
        guard let algorithm = DigestAlgorithm(options.algorithm ?? "MD5") else {
            throw TestingError(
                "DigestAuthGate: '\(options.algorithm ?? "")' is not a Digest algorithm Sesame implements"
            )
        }
        self.users = users
        self.options = options
        self.algorithm = algorithm
    }

    /// The user a request authenticated as, when its answer is right.
    public func respond(
        _ request: LocalServer.Request,
        then body: (String) -> LocalServer.Response = { .text("hello \($0)") }
    ) -> LocalServer.Response {
        guard let header = request.headers["authorization"], header.lowercased().hasPrefix("digest "),
            let answer = AuthChallengeParser.parse(header).challenges.first,
            let nonce = answer.parameter("nonce")
        else { return challenge(stale: false) }
        let known = nonces.withLock { $0[nonce] }
        guard var state = known else { return challenge(stale: false) }
        guard state.uses < options.nonceUses else { return challenge(stale: true) }
        let h: (String) -> String = algorithm.hash(_:)
        guard let user = user(in: answer, h: h), let password = users[user] else { return challenge(stale: false) }
        let nc = answer.parameter("nc") ?? ""
        let cnonce = answer.parameter("cnonce") ?? ""
        let qop = answer.parameter("qop")
        if options.qop != nil {
            guard let count = Int(nc, radix: 16), count > state.lastCount, qop != nil else {
                return challenge(stale: false)
            }
            state.lastCount = count
        }
        var ha1 = h("\(user):\(options.realm):\(password)")
        if algorithm.isSession { ha1 = h("\(ha1):\(nonce):\(cnonce)") }
        let uri = answer.parameter("uri") ?? ""
        let bodyHash = h(String(decoding: request.body, as: UTF8.self))
        let a2 = qop == "auth-int" ? "\(request.method):\(uri):\(bodyHash)" : "\(request.method):\(uri)"
        let expected =
            qop.map { h("\(ha1):\(nonce):\(nc):\(cnonce):\($0):\(h(a2))") } ?? h("\(ha1):\(nonce):\(h(a2))")
        guard answer.parameter("response") == expected, uri == request.target else { return challenge(stale: false) }
        state.uses += 1
        let updated = state
        nonces.withLock { $0[nonce] = updated }
        var response = body(user)
        var info: [String] = []
        let responseBody = response.bodyText
        let infoA2 = qop == "auth-int" ? ":\(uri):\(h(responseBody))" : ":\(uri)"
        switch options.rspauth {
        case .none: break
        case .correct:
            let rspauth =
                qop.map { h("\(ha1):\(nonce):\(nc):\(cnonce):\($0):\(h(infoA2))") } ?? h("\(ha1):\(nonce):\(h(infoA2))")
            info.append("rspauth=\"\(rspauth)\"")
        case .wrong:
            info.append("rspauth=\"\(h("not the right one"))\"")
        }
        if let qop { info += ["qop=\(qop)", "nc=\(nc)", "cnonce=\"\(cnonce)\""] }
        if options.sendsNextnonce { info.append("nextnonce=\"\(issueNonce())\"") }
        if !info.isEmpty { response = response.adding(header: ("Authentication-Info", info.joined(separator: ", "))) }
        return response
    }

    private func user(in answer: HTTPAuthChallenge, h: (String) -> String) -> String? {
        if answer.parameter("userhash") == "true", let hashed = answer.parameter("username") {
            return users.keys.first { h("\($0):\(options.realm)") == hashed }
        }
        if let extended = answer.parameter("username*"), extended.hasPrefix("UTF-8''") {
            return String(extended.dropFirst(7)).percentDecoded()
        }
        return answer.parameter("username")
    }

    private func issueNonce() -> String {
        let nonce = (0..<16).map { _ in String(UInt8.random(in: 0...255), radix: 16) }.joined()
        nonces.withLock { $0[nonce] = NonceState() }
        return nonce
    }

    /// A 401 with a fresh nonce.
    public func challenge(stale: Bool) -> LocalServer.Response {
        var parameters = ["realm=\"\(options.realm)\"", "nonce=\"\(issueNonce())\"", "opaque=\"sesame-opaque\""]
        if let qop = options.qop { parameters.append("qop=\"\(qop)\"") }
        if let algorithm = options.algorithm { parameters.append("algorithm=\(algorithm)") }
        if options.userhash { parameters += ["charset=UTF-8", "userhash=true"] }
        if stale { parameters.append("stale=true") }
        var headers = options.otherChallenges.map { ("WWW-Authenticate", $0) }
        headers.append(("WWW-Authenticate", "Digest " + parameters.joined(separator: ", ")))
        return .text("digest required", status: 401, headers: headers)
    }
}
