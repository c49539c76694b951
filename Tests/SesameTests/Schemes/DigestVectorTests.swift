import Foundation
import Testing

@testable import Sesame

/// Every vector of `../shared/reference/digest-vectors.json`, copied here (the file lives outside
/// the repository), computed by ``DigestAuthorizer``. For RFC 7616 section 3.9.2 the values to
/// match are the real FIPS 180-4 SHA-512/256 ones, not the RFC's printed (truncated SHA-512) ones.
@Suite struct DigestVectorTests {
    struct Vector: Sendable {
        let id: String
        let challenge: String
        let username: String
        let password: String
        let method: String
        let uri: String
        let nc: Int
        let cnonce: String
        let response: String
        let authorization: String?
        var usernameHash: String? = nil
    }

    static let vectors: [Vector] = [
        Vector(
            id: "rfc2617-3.5",
            challenge:
                "Digest realm=\"testrealm@host.com\", qop=\"auth,auth-int\", nonce=\"dcd98b7102dd2f0e8b11d0f600bfb0c093\", opaque=\"5ccc069c403ebaf9f0171e9517f40e41\"",
            username: "Mufasa",
            password: "Circle Of Life",
            method: "GET",
            uri: "/dir/index.html",
            nc: 1,
            cnonce: "0a4f113b",
            response: "6629fae49393a05397450978507c4ef1",
            authorization:
                "Digest username=\"Mufasa\", realm=\"testrealm@host.com\", nonce=\"dcd98b7102dd2f0e8b11d0f600bfb0c093\", uri=\"/dir/index.html\", qop=auth, nc=00000001, cnonce=\"0a4f113b\", response=\"6629fae49393a05397450978507c4ef1\", opaque=\"5ccc069c403ebaf9f0171e9517f40e41\""
        ),
        Vector(
            id: "rfc7616-3.9.1-md5",
            challenge:
                "Digest realm=\"http-auth@example.org\", qop=\"auth, auth-int\", algorithm=MD5, nonce=\"7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v\", opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\"",
            username: "Mufasa",
            password: "Circle of Life",
            method: "GET",
            uri: "/dir/index.html",
            nc: 1,
            cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ",
            response: "8ca523f5e9506fed4657c9700eebdbec",
            authorization:
                "Digest username=\"Mufasa\", realm=\"http-auth@example.org\", uri=\"/dir/index.html\", algorithm=MD5, nonce=\"7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v\", nc=00000001, cnonce=\"f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ\", qop=auth, response=\"8ca523f5e9506fed4657c9700eebdbec\", opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\""
        ),
        Vector(
            id: "rfc7616-3.9.1-sha256",
            challenge:
                "Digest realm=\"http-auth@example.org\", qop=\"auth, auth-int\", algorithm=SHA-256, nonce=\"7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v\", opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\"",
            username: "Mufasa",
            password: "Circle of Life",
            method: "GET",
            uri: "/dir/index.html",
            nc: 1,
            cnonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ",
            response: "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1",
            authorization:
                "Digest username=\"Mufasa\", realm=\"http-auth@example.org\", uri=\"/dir/index.html\", algorithm=SHA-256, nonce=\"7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v\", nc=00000001, cnonce=\"f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ\", qop=auth, response=\"753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1\", opaque=\"FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS\""
        ),
        Vector(
            id: "rfc7616-3.9.2-sha512-256-userhash (FIPS 180-4 values)",
            challenge:
                "Digest realm=\"api@example.org\", qop=\"auth\", algorithm=SHA-512-256, nonce=\"5TsQWLVdgBdmrQ0XsxbDODV+57QdFR34I9HAbC/RVvkK\", opaque=\"HRPCssKJSGjCrkzDg8OhwpzCiGPChXYjwrI2QmXDnsOS\", charset=UTF-8, userhash=true",
            username: "Jäsøn Doe",
            password: "Secret, or not?",
            method: "GET",
            uri: "/doe.json",
            nc: 1,
            cnonce: "NTg6RKcb9boFIAS3KrFK9BGeh+iDa/sm6jUMp2wds69v",
            response: "3798d4131c277846293534c3edc11bd8a5e4cdcbff78b05db9d95eeb1cec68a5",
            authorization: nil,
            usernameHash: "793263caabb707a56211940d90411ea4a575adeccb7e360aeb624ed06ece9b0b"
        ),
    ]

    func authorize(_ vector: Vector) throws -> (header: HTTPAuthChallenge, expectation: DigestAuthorizer.Expectation) {
        let parsed = try #require(AuthChallengeParser.parse(vector.challenge).challenges.first)
        let challenge = try #require(DigestChallenge(parsed))
        let authorizer = try DigestAuthorizer(
            challenge: challenge,
            user: vector.username,
            password: vector.password,
            bodyIsHashable: false,
            makeCnonce: { vector.cnonce }
        )
        let (text, expectation) = authorizer.authorization(
            method: vector.method,
            uri: vector.uri,
            bodyHash: { "" },
            nc: vector.nc
        )
        return (try #require(AuthChallengeParser.parse(text).challenges.first), expectation)
    }

    @Test(arguments: vectors.map(\.id))
    func theResponseMatches(id: String) throws {
        let vector = try #require(Self.vectors.first { $0.id == id })
        let (header, _) = try authorize(vector)
        #expect(header.parameter("response") == vector.response)
        if let expected = vector.authorization {
            // Same parameters and values; the order is free.
            let want = try #require(AuthChallengeParser.parse(expected).challenges.first)
            #expect(Set(header.parameters) == Set(want.parameters))
        }
        if let hash = vector.usernameHash {
            #expect(header.parameter("username") == hash)
            #expect(header.parameter("userhash") == "true")
        }
    }

    func digest(_ field: String) throws -> DigestChallenge {
        let parsed = try #require(AuthChallengeParser.parse(field).challenges.first)
        return try #require(DigestChallenge(parsed))
    }

    @Test func quotesAndBackslashesAreEscapedOnTheWireAndHashedAsTheyAre() throws {
        let challenge = try digest(#"Digest realm="a \"b\" \\c", qop="auth", nonce="n\"1", algorithm=MD5"#)
        #expect(challenge.realm == #"a "b" \c"#)
        let authorizer = try DigestAuthorizer(
            challenge: challenge,
            user: #"say "hi"\"#,
            password: "p",
            bodyIsHashable: false,
            makeCnonce: { "c" }
        )
        let (text, _) = authorizer.authorization(method: "GET", uri: "/", bodyHash: { "" }, nc: 1)
        #expect(text.contains(#"username="say \"hi\"\\""#))
        #expect(text.contains(#"realm="a \"b\" \\c""#))
        let header = try #require(AuthChallengeParser.parse(text).challenges.first)
        #expect(header.parameter("username") == #"say "hi"\"#)
        #expect(header.parameter("nonce") == #"n"1"#)
        // RFC 7616: the hashes cover the unquoted values.
        let md5 = DigestAlgorithm(hash: .md5, isSession: false)
        let ha1 = md5.hash(#"say "hi"\:a "b" \c:p"#)
        let expected = md5.hash("\(ha1):n\"1:00000001:c:auth:\(md5.hash("GET:/"))")
        #expect(header.parameter("response") == expected)
    }

    @Test func aNonASCIIUserWithoutUserhashGoesInUsernameStar() throws {
        let challenge = try digest("Digest realm=\"api@example.org\", qop=\"auth\", nonce=\"n\", charset=UTF-8")
        let authorizer = try DigestAuthorizer(
            challenge: challenge,
            user: "Jäsøn Doe",
            password: "x",
            bodyIsHashable: false
        )
        let (text, _) = authorizer.authorization(method: "GET", uri: "/", bodyHash: { "" })
        #expect(text.contains("username*=UTF-8''J%C3%A4s%C3%B8n%20Doe"))
        #expect(!text.contains("username=\""))
    }

    @Test func theRFC2617RspauthChecksAndAWrongOneFails() throws {
        let vector = Self.vectors[0]
        let parsed = try #require(AuthChallengeParser.parse(vector.challenge).challenges.first)
        let authorizer = try DigestAuthorizer(
            challenge: try #require(DigestChallenge(parsed)),
            user: vector.username,
            password: vector.password,
            bodyIsHashable: false,
            makeCnonce: { vector.cnonce }
        )
        let (_, expectation) = authorizer.authorization(method: "GET", uri: vector.uri, bodyHash: { "" }, nc: 1)
        try authorizer.verify(
            "rspauth=\"376602cfd2f4e8e5e78b948a85263e85\", qop=auth, nc=00000001, cnonce=\"0a4f113b\"",
            expectation: expectation
        )
        let error = #expect(throws: SesameError.self) {
            try authorizer.verify("rspauth=\"00000000000000000000000000000000\"", expectation: expectation)
        }
        #expect(error?.code == .serverAuthenticationFailed)
    }

    @Test func nonceCountsIncreaseAndNextnonceRestartsThem() throws {
        let parsed = try #require(
            AuthChallengeParser.parse("Digest realm=\"r\", qop=\"auth\", nonce=\"one\", algorithm=SHA-256-sess")
                .challenges.first
        )
        let authorizer = try DigestAuthorizer(
            challenge: try #require(DigestChallenge(parsed)),
            user: "u",
            password: "p",
            bodyIsHashable: true
        )
        let (first, expectation) = authorizer.authorization(method: "GET", uri: "/", bodyHash: { "" })
        let (second, _) = authorizer.authorization(method: "GET", uri: "/", bodyHash: { "" })
        #expect(first.contains("nc=00000001") && second.contains("nc=00000002"))
        #expect(first.contains("algorithm=SHA-256-sess"))
        try authorizer.verify("nextnonce=\"two\"", expectation: expectation)
        let (third, _) = authorizer.authorization(method: "GET", uri: "/", bodyHash: { "" })
        #expect(third.contains("nonce=\"two\"") && third.contains("nc=00000001"))
    }

    @Test func unknownAlgorithmsAreNotAnswered() throws {
        let parsed = try #require(
            AuthChallengeParser.parse("Digest realm=\"r\", nonce=\"n\", algorithm=SHA-1").challenges.first
        )
        let challenge = try #require(DigestChallenge(parsed))
        #expect(!challenge.isAnswerable)
        #expect(throws: SesameError.self) {
            try DigestAuthorizer(challenge: challenge, user: "u", password: "p", bodyIsHashable: false)
        }
    }

    @Test func authIntNeedsAHashableBody() throws {
        let parsed = try #require(
            AuthChallengeParser.parse("Digest realm=\"r\", nonce=\"n\", qop=\"auth-int\"").challenges.first
        )
        let challenge = try #require(DigestChallenge(parsed))
        let error = #expect(throws: SesameError.self) {
            try DigestAuthorizer(challenge: challenge, user: "u", password: "p", bodyIsHashable: false)
        }
        #expect(error?.code == .unsupportedCredential)
        let both = try digest("Digest realm=\"r\", nonce=\"n\", qop=\"auth,auth-int\"")
        #expect(try DigestAuthorizer(challenge: both, user: "u", password: "p", bodyIsHashable: true).qop == "auth-int")
        #expect(try DigestAuthorizer(challenge: both, user: "u", password: "p", bodyIsHashable: false).qop == "auth")
    }
}
