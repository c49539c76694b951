import FoundationEssentials

/// One challenge a 401 (or 407) response offered, as a protection space plus what answering it
/// needs.
struct ChallengeOffer: Sendable {
    let space: ProtectionSpace
    let challenge: HTTPAuthChallenge
    /// The Digest parameters, for Digest challenges.
    let digest: DigestChallenge?

    /// True when Sesame can compute an answer (Basic, or Digest with a known algorithm and qop).
    var isAnswerable: Bool {
        switch space.authenticationMethod {
        case .httpBasic: true
        case .httpDigest: digest?.isAnswerable == true
        case .negotiate: (try? GSSAPI.shared.get()) != nil
        case .ntlm: true
        default: false
        }
    }

    /// "Digest SHA-256", "Basic", "Bearer" for traces.
    var summary: String {
        if let digest { return "Digest \(digest.algorithm?.description ?? digest.algorithmName ?? "?")" }
        return challenge.scheme
    }

    /// The server's token in a Negotiate or NTLM challenge (`Negotiate <base64>`): nil when the
    /// challenge carries none, or one that is not base64.
    var exchangeToken: [UInt8]? {
        guard space.authenticationMethod == .negotiate || space.authenticationMethod == .ntlm,
            let token = challenge.token68,
            let bytes = Data(base64Encoded: token)
        else { return nil }
        return Array(bytes)
    }

    /// Higher goes first (curl's order): Negotiate (when GSSAPI is installed) > NTLM > Digest
    /// SHA-512-256 > SHA-256 > MD5 > Basic > what Sesame cannot answer.
    var rank: Int {
        guard isAnswerable else { return 0 }
        if space.authenticationMethod == .negotiate { return 100 }
        if space.authenticationMethod == .ntlm { return 50 }
        if let algorithm = digest?.algorithm { return 10 + algorithm.strength }
        return 5
    }
}

/// The protection spaces a 401 (or 407) response offers, strongest first.
enum OfferedProtectionSpaces {
    /// Parses the response's challenge fields for `origin` and ranks them (stable for equal ranks:
    /// the server's order). Challenges Sesame cannot answer stay in the list, last: a delegate may
    /// answer or reject them.
    static func parse(
        _ response: HTTPResponse,
        origin: Origin,
        isProxy: Bool
    ) -> (offers: [ChallengeOffer], problems: [String]) {
        let field = isProxy ? "Proxy-Authenticate" : "WWW-Authenticate"
        let parsed = AuthChallengeParser.parse(response.headers.values(for: field))
        let server = ProtectionSpace(
            host: origin.host,
            port: origin.port,
            protocol: isProxy ? nil : origin.scheme,
            realm: nil,
            authenticationMethod: .default,
            isProxy: isProxy,
            proxyType: isProxy ? origin.scheme : nil
        )
        var problems = parsed.problems
        var offers: [ChallengeOffer] = []
        for challenge in parsed.challenges {
            let digest = DigestChallenge(challenge)
            if challenge.method == .httpDigest, digest == nil {
                problems.append("a Digest challenge without realm or nonce was ignored")
                continue
            }
            let offer = ChallengeOffer(
                space: server.with(realm: challenge.realm, method: challenge.method),
                challenge: challenge,
                digest: digest
            )
            // The same space twice (one per Digest algorithm is fine): keep the first.
            if offers.contains(where: { $0.space == offer.space && $0.summary == offer.summary }) { continue }
            offers.append(offer)
        }
        let ranked = offers.enumerated().sorted { ($1.element.rank, $0.offset) < ($0.element.rank, $1.offset) }
        return (ranked.map(\.element), problems)
    }
}
