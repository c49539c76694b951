import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// `Expect: 100-continue` over HTTP/2 (RFC 9110 section 10.1.1, RFC 9113 section 8.1): the
/// HEADERS go out alone; the body follows a 100, or silence for `expectContinueTimeout`, and is
/// never sent after a final answer.
@Suite(.serialized) struct HTTP2ExpectContinueTests {
    /// `waiting`: how long a body waits for the 100. Long by default, so that only what the
    /// server says decides whether the body goes (a loaded run may take a second for anything);
    /// the task's 60 s end the wait sooner, so a body that waited for nothing fails the test.
    func configuration(waiting: Duration = .seconds(120)) -> SessionConfiguration {
        var configuration = SessionConfiguration.default
        configuration.httpVersion = .http2PriorKnowledge
        configuration.proxy = .none
        configuration.cookieStore = nil
        configuration.credentialStorage = nil
        configuration.expectContinueTimeout = waiting
        configuration.resourceTimeout = .seconds(60)
        return configuration
    }

    func session(waiting: Duration = .seconds(120)) -> Session {
        Session(configuration: configuration(waiting: waiting))
    }

    func expecting(_ port: Int, bytes: Int) -> HTTPRequest {
        var request = HTTPRequest(
            url: URL(string: "http://127.0.0.1:\(port)/upload")!,
            method: "POST",
            body: .data(Data(repeating: 7, count: bytes))
        )
        request.headers.add(name: "Expect", value: "100-continue")
        return request
    }

    @Test func aHundredLetsTheBodyGoAtOnce() async throws {
        let server = try HostileHTTP2Server { _ in .expectation(continues: true) }
        defer { server.stop() }
        let heads = Recorder<String>()
        var configuration = configuration()
        configuration.eventObserver = { event in
            if case .responseHeadReceived(let head) = event { heads.append(head) }
        }
        let (data, response) = try await Session(configuration: configuration).data(
            for: expecting(server.port, bytes: 300_000)
        )
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "got 300000")
        #expect(heads.all.first?.hasPrefix("HTTP/2 100") == true, "the 100 came first: \(heads.all)")
    }

    @Test func aFinalAnswerFirstMeansTheBodyIsNeverSent() async throws {
        let server = try HostileHTTP2Server { _ in .expectation(continues: false, status: 413) }
        defer { server.stop() }
        let session = session()
        let (_, response) = try await session.data(for: expecting(server.port, bytes: 500_000))
        #expect(response.status == 413)
        // The stream was reset; the connection carries the next request.
        var get = HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/")!)
        get.method = "GET"
        let (body, _) = try await session.data(for: get)
        #expect(String(decoding: body, as: UTF8.self) == "no body")
        #expect(server.connectionCount == 1)
        // The server reads the connection in order: by the next request, any body would have come.
        #expect(server.bodyBytesReceived == 0)
    }

    @Test func aServerThatIgnoresTheExpectationGetsTheBodyOnceTheWaitIsOver() async throws {
        let server = try HostileHTTP2Server { _ in .answer("stored") }
        defer { server.stop() }
        let started = ContinuousClock.now
        let (data, response) = try await session(waiting: .milliseconds(300)).data(
            for: expecting(server.port, bytes: 100_000)
        )
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "stored")
        #expect(ContinuousClock.now - started >= .milliseconds(300), "the body waited for an answer first")
        #expect(server.bodyBytesReceived == 100_000)
    }

    @Test func nghttpdAnswersTheExpectationAndEchoesTheBody() async throws {
        let server = try await NghttpdServer(echoUpload: true)
        defer { server.stop() }
        let (data, response) = try await session().data(for: expecting(server.port, bytes: 100_000))
        #expect(response.status == 200)
        #expect(data == Data(repeating: 7, count: 100_000))
    }
}
