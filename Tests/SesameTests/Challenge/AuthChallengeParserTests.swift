import Foundation
import Testing

@testable import Sesame

@Suite struct AuthChallengeParserTests {
    private func parse(_ fields: String...) -> AuthChallengeParser.Result { AuthChallengeParser.parse(fields) }

    @Test func aSingleBasicChallenge() throws {
        let result = parse("Basic realm=\"Peers Basic\"")
        #expect(result.problems.isEmpty)
        let challenge = try #require(result.challenges.first)
        #expect(challenge.method == .httpBasic)
        #expect(challenge.realm == "Peers Basic")
    }

    @Test func severalChallengesInOneFieldAndAcrossFields() {
        let result = parse(
            "Newauth realm=\"apps\", type=1, title=\"Login to \\\"apps\\\"\", Basic realm=\"simple\"",
            "Bearer, Negotiate abc+/def==, Digest realm=\"d\", nonce=\"n\", qop=\"auth,auth-int\""
        )
        #expect(result.problems.isEmpty)
        #expect(result.challenges.map(\.scheme) == ["Newauth", "Basic", "Bearer", "Negotiate", "Digest"])
        #expect(result.challenges[0].parameter("title") == "Login to \"apps\"")
        #expect(result.challenges[0].parameter("TYPE") == "1")
        #expect(result.challenges[3].token68 == "abc+/def==")
        #expect(result.challenges[4].parameter("qop") == "auth,auth-int")
    }

    @Test func namesAreCaseInsensitiveAndEmptyElementsIgnored() {
        let result = parse(", ,BASIC REALM=\"x\" ,, ,")
        #expect(result.challenges.count == 1)
        #expect(result.challenges.first?.method == .httpBasic)
        #expect(result.challenges.first?.realm == "x")
    }

    @Test(arguments: [
        ("Basic realm=\"a\", realm=\"b\"", 0),  // duplicate parameter: dropped
        ("Basic realm=\"unterminated", 0),
        ("Basic realm=", 1),  // "realm=" is a token68
        ("=Basic", 0),
        ("Basic realm=\"a\" junk, Bearer", 1),
        ("Basic realm=\"line\nbreak\"", 0),
        ("Basic realm=\"ok\", Bearer realm=\"x\", Bearer realm=\"y\"", 3),
        ("", 0),
        (",,, ,", 0),
        ("Basic\trealm=\"tab\"", 1),
        ("Basic Realm=\"a\", REALM=\"b\"", 0),  // duplicate in another case: dropped
        ("Basic realm=\"a\"realm2=\"b\"", 0),  // no comma between parameters
        ("realm=\"no scheme\"", 0),
        ("Digest realm=\"x\", nonce=", 1),  // the valueless "nonce=" is skipped; no nonce: unusable Digest
        ("Basic realm=\"nul\u{0}\"", 0),
        ("Basic realm=\"ünïcödé\"", 1),
        ("Basic realm=\"a\", , , Digest realm=\"b\", nonce=\"n\"", 2),
        ("Negotiate", 1),
        ("Negotiate YII=, Basic realm=\"x\"", 2),
        ("Basic realm=token-value", 1),
        (String(repeating: "a", count: 10_000) + " realm=\"x\"", 1),
    ])
    func hostileAndOddFieldsNeverCrashAndKeepWhatIsValid(field: String, expected: Int) {
        #expect(parse(field).challenges.count == expected)
    }

    @Test func sizesAreBounded() {
        let many = Array(repeating: "Bearer realm=\"x\"", count: 100).joined(separator: ", ")
        let result = parse(many)
        #expect(result.challenges.count == AuthChallengeParser.maximumChallenges)
        #expect(!result.problems.isEmpty)
        let huge = parse("Basic realm=\"" + String(repeating: "a", count: 100_000) + "\"")
        #expect(huge.challenges.isEmpty)
    }

    @Test func unknownSchemesBecomeMethodsOfTheirOwn() {
        let method = AuthenticationMethod.httpScheme("Bearer")
        #expect(method.schemeName == "bearer")
        #expect(method != .httpBasic)
        #expect(AuthenticationMethod.httpScheme("dIgEsT") == .httpDigest)
        #expect(AuthenticationMethod.httpScheme("NTLM").isSessionWide)
    }
}

@Suite struct AuthChallengeParserRoundTripTests {
    /// Inputs the fuzzer (scripts/fuzz.sh) once failed on: what Sesame prints, it reads back.
    static let found: [String] = [
        "RGlnZXN0IHN0IHJlYWxtPSIgXCL/////XCIiLCBTZXF1ZW5jZXA0RGlnZXN0IHN0IHJlYWxtPSIgHCL/////XCIiLCBTZXF1ZW5jZXA0IHJlYWxtPSIgXCL/////XCIiLCBwbGUiCk5obSByZWFsbT0iIFwi/////1wi1qioqCwgcEdlIgpOaG0=",
        "TmV3YXV0aCByZWFsbT0iYXBwcyIsIHR5cGU9MSwgdGl0bGU9IkxvZ2luIHRvIFwCYXBwc1wiIiwgQmFzaWMgcmVhbG0sYXV0aC1pbnQiLCBhbGdvcml0aG09Yz09LCBCZWFyZXI=",
    ].map {
        String(decoding: Data(base64Encoded: $0) ?? Data(), as: UTF8.self)
    }

    @Test(arguments: found)
    func printedChallengesParseBackTheSame(field: String) {
        #expect(!field.isEmpty)
        let fields = field.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        for challenge in AuthChallengeParser.parse(fields).challenges where challenge.token68 == nil {
            let again = AuthChallengeParser.parse(challenge.description).challenges
            #expect(again.count == 1, "\(challenge.description)")
            #expect(again.first?.parameters == challenge.parameters, "\(challenge.description)")
        }
    }
}
