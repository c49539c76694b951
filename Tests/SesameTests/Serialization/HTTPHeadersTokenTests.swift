import Testing

@testable import Sesame

/// List fields (Connection, Transfer-Encoding, Content-Encoding) are read element by element.
@Suite struct HTTPHeadersTokenTests {
    @Test func tokensAreTrimmedCaseInsensitiveAndSpanRepeatedFields() {
        let headers: HTTPHeaders = ["Connection": " Upgrade ,,\tKeep-Alive", "connection": "CLOSE"]
        #expect(headers.containsToken("keep-alive", in: "Connection"))
        #expect(headers.containsToken("close", in: "CONNECTION"))
        #expect(!headers.containsToken("alive", in: "Connection"))
        #expect(!headers.containsToken("", in: "Connection"))
        var seen: [String] = []
        headers.forEachToken(in: "connection") { token in
            seen.append(String(decoding: token, as: UTF8.self))
            return seen.count < 2
        }
        #expect(seen == ["Upgrade", "Keep-Alive"])
    }

    @Test func aFieldOfOnlySeparatorsHasNoTokens() {
        let headers: HTTPHeaders = ["Transfer-Encoding": " , \t,"]
        var count = 0
        headers.forEachToken(in: "Transfer-Encoding") { _ in
            count += 1
            return true
        }
        #expect(count == 0)
    }
}
