// Fuzz target `auth-challenge`: WWW-Authenticate / Proxy-Authenticate fields (one per line).

func fuzzAuthChallenge(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    // Several fields: split the input at newlines, as separate header lines.
    let fields = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let result = AuthChallengeParser.parse(fields)
    fuzzRequire(result.challenges.count <= AuthChallengeParser.maximumChallenges)
    for challenge in result.challenges {
        fuzzRequire(challenge.parameters.count <= AuthChallengeParser.maximumParameters)
        fuzzRequire(!challenge.scheme.isEmpty)
        // What Sesame prints, it reads back the same (escapes round-trip).
        if challenge.token68 == nil, !challenge.parameters.isEmpty {
            let again = AuthChallengeParser.parse(challenge.description).challenges
            fuzzRequire(again.count == 1 && again[0].parameters == challenge.parameters, "round trip: \(challenge)")
        }
        _ = DigestChallenge(challenge)
    }
}
