// libFuzzer entry point for the challenge parser, built by scripts/fuzz.sh with
// `swiftc -sanitize=fuzzer,address` together with the parser's own source files.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAuthChallengeParser(_ start: UnsafeRawPointer, _ count: Int) -> CInt {
    let bytes = UnsafeRawBufferPointer(start: start, count: count)
    let text = String(decoding: bytes, as: UTF8.self)
    // Several fields: split the input at newlines, as separate header lines.
    let fields = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    let result = AuthChallengeParser.parse(fields)
    precondition(result.challenges.count <= AuthChallengeParser.maximumChallenges)
    for challenge in result.challenges {
        precondition(challenge.parameters.count <= AuthChallengeParser.maximumParameters)
        precondition(!challenge.scheme.isEmpty)
        // What Sesame prints, it reads back the same (escapes round-trip).
        if challenge.token68 == nil, !challenge.parameters.isEmpty {
            let again = AuthChallengeParser.parse(challenge.description).challenges
            precondition(again.count == 1 && again[0].parameters == challenge.parameters, "round trip: \(challenge)")
        }
        _ = DigestChallenge(challenge)
    }
    return 0
}
