import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Test servers started and stopped by the hundred while other tests run: a stopped server's
/// threads never touch a descriptor that is no longer theirs. (A server that closed its
/// connections' descriptors while its threads still read them read the next client's bytes,
/// once the number went to a new socket: that client's request then went unanswered.)
@Suite struct TestServerTurnoverTests {
    @Test(arguments: 0..<4) func everyFirstRequestToAFreshHTTP2ServerIsAnswered(_ lane: Int) async throws {
        var configuration = SessionConfiguration.default
        configuration.httpVersion = .http2PriorKnowledge
        configuration.proxy = .none
        configuration.cookieStore = nil
        configuration.credentialStorage = nil
        configuration.requestTimeout = .seconds(20)
        var unanswered: [String] = []
        for _ in 0..<100 {
            let server = try HostileHTTP2Server { _ in .answerFirstThenSilent }
            defer { server.stop() }
            let session = Session(configuration: configuration)
            do {
                let (body, _) = try await session.data(from: URL(string: "http://127.0.0.1:\(server.port)/")!)
                #expect(String(decoding: body, as: UTF8.self) == "the only answer")
            } catch {
                unanswered.append("\(error)")
            }
        }
        #expect(unanswered.isEmpty, "\(unanswered)")
    }

    @Test(arguments: 0..<4) func aStalledListenerClosedWhileOthersOpenLeavesTheirConnectionsBe(_ lane: Int) async throws
    {
        for _ in 0..<100 {
            let stalled = try StalledListener(.acceptsAndSaysNothing)
            let server = try HostileHTTP2Server { _ in .answer("ok") }
            defer { server.stop() }
            stalled.close()
            var configuration = SessionConfiguration.default
            configuration.httpVersion = .http2PriorKnowledge
            configuration.proxy = .none
            configuration.requestTimeout = .seconds(20)
            let session = Session(configuration: configuration)
            let (body, _) = try await session.data(from: URL(string: "http://127.0.0.1:\(server.port)/")!)
            #expect(String(decoding: body, as: UTF8.self) == "ok")
        }
    }
}
