import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// `Expect: 100-continue` over HTTP/1.1 (RFC 9110 section 10.1.1): the body waits for the
/// server's 100 for `expectContinueTimeout` at most, and is not sent when a final answer comes first.
@Suite struct ExpectContinueTests {
    func expecting(_ origin: LocalServer, bytes: Int) -> HTTPRequest {
        var request = HTTPRequest(url: url(origin, "/"), method: "POST", body: .data(Data(repeating: 3, count: bytes)))
        request.headers.add(name: "Expect", value: "100-continue")
        return request
    }

    @Test func aServerThatNeverSaysContinueGetsTheBodyOnceTheWaitIsOver() async throws {
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.sendsContinue = false
        configuration.handler = { request in .text("got \(request.body.count)") }
        let origin = try LocalServer(configuration)
        defer { origin.shutdown() }
        let started = ContinuousClock.now
        let session = testSession { $0.expectContinueTimeout = .milliseconds(300) }
        let (data, response) = try await session.data(for: expecting(origin, bytes: 200_000))
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "got 200000")
        #expect(ContinuousClock.now - started >= .milliseconds(300), "the body waited for the server first")
    }
}
