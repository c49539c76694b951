import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// A response whose DATA does not match its content-length is malformed (RFC 9113 section 8.1.1):
/// the client resets the stream, and the request fails at once with a `protocolError` that says
/// why, never waiting for bytes that cannot come.
@Suite(.serialized) struct HTTP2ResetWhileReadingTests {
    static func session() -> Session {
        var configuration = SessionConfiguration.default
        configuration.httpVersion = .http2PriorKnowledge
        configuration.proxy = .none
        configuration.cookieStore = nil
        configuration.credentialStorage = nil
        configuration.requestTimeout = .seconds(60)
        return Session(configuration: configuration)
    }

    @Test(arguments: [
        (100, 10, "ended after 10 bytes of DATA, but its content-length announced 100"),
        (5, 10, "went past the 5 bytes its content-length announced"),
    ])
    func aBodyThatDoesNotMatchItsContentLengthFailsTheRequest(announced: Int, sent: Int, says: String) async throws {
        let server = try HostileHTTP2Server { _ in .contentLengthMismatch(declared: announced, sent: sent) }
        defer { server.stop() }
        do {
            _ = try await Self.session().data(from: URL(string: "http://127.0.0.1:\(server.port)/")!)
            Issue.record("a malformed response was delivered")
        } catch let error as SesameError {
            #expect(error.code == .protocolError, "\(error)")
            #expect(error.detail.contains(says), "\(error)")
        }
    }
}
