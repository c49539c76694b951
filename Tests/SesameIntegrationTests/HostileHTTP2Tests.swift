import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// HTTP/2 servers that go away, refuse, reset, flood or never end: each failure stays with the
/// requests it concerns, requests the server did not process are sent again, and the errors say
/// what happened.
@Suite(.serialized) struct HostileHTTP2Tests {
    func session(on loop: EventLoop = .shared, _ adjust: (inout SessionConfiguration) -> Void = { _ in }) -> Session {
        var configuration = SessionConfiguration.default
        configuration.httpVersion = .http2PriorKnowledge
        configuration.proxy = .none
        configuration.cookieStore = nil
        configuration.credentialStorage = nil
        adjust(&configuration)
        return Session(configuration: configuration, eventLoop: loop)
    }

    func body(_ session: Session, _ url: URL, method: String = "GET", body: Data? = nil) async throws -> String {
        var request = HTTPRequest(url: url)
        request.method = method
        if let body { request.body = .data(body) }
        let (data, _) = try await session.data(for: request)
        return String(decoding: data, as: UTF8.self)
    }

    func error(_ work: () async throws -> Void) async -> SesameError? {
        do {
            try await work()
            return nil
        } catch {
            return error as? SesameError
        }
    }

    @Test func requestsAboveGoAwaysLastStreamAreSentAgainOnANewConnection() async throws {
        let server = try HostileHTTP2Server { $0 == 0 ? .goAwayAfterFirstStream : .answer("second connection") }
        defer { server.stop() }
        let session = session()
        let url = URL(string: "http://127.0.0.1:\(server.port)/")!
        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<3 {
                group.addTask {
                    // POST too: GOAWAY says the stream was not processed, whatever its method.
                    try await body(
                        session,
                        url,
                        method: index == 2 ? "POST" : "GET",
                        body: index == 2 ? Data("x".utf8) : nil
                    )
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(bodies.sorted() == ["first", "second connection", "second connection"])
        #expect(server.connectionCount == 2)
    }

    @Test func aRefusedStreamIsSentAgainEvenForAPost() async throws {
        let server = try HostileHTTP2Server { $0 == 0 ? .refuseStreams : .answer("accepted") }
        defer { server.stop() }
        let url = URL(string: "http://127.0.0.1:\(server.port)/form")!
        #expect(try await body(session(), url, method: "POST", body: Data("a=1".utf8)) == "accepted")
    }

    @Test func refusedRequestsAtTheConnectionLimitTryTheSameConnectionAndEnd() async throws {
        let server = try HostileHTTP2Server { _ in .refuseStreams }
        defer { server.stop() }
        let session = session { $0.maximumConnectionsPerHost = 1 }
        let failure = await error { _ = try await session.data(from: URL(string: "http://127.0.0.1:\(server.port)/")!) }
        #expect(failure?.code == .streamReset, "\(String(describing: failure))")
        #expect(failure?.detail.contains("REFUSED_STREAM") == true, "\(String(describing: failure))")
        #expect(server.connectionCount == 1)
    }

    @Test func http11RequiredSendsTheRequestAgainOverHTTP11() async throws {
        let server = try HostileHTTP2Server { _ in .requireHTTP1 }
        defer { server.stop() }
        let session = session()
        let url = URL(string: "http://127.0.0.1:\(server.port)/")!
        let (data, response) = try await session.data(from: url)
        #expect(response.version == "HTTP/1.1")
        #expect(String(decoding: data, as: UTF8.self) == "http/1.1 answer")
        // The origin is known to want HTTP/1.1 now: the next request starts there.
        _ = try await session.data(from: url)
        #expect(server.http1AnswerCount == 2)
        #expect(server.connectionCount == 3, "one HTTP/2 connection, then two HTTP/1.1 ones (Connection: close)")
    }

    @Test func aResetStreamFailsItsTaskAloneAndTheConnectionGoesOn() async throws {
        let server = try HostileHTTP2Server { _ in .resetFirstAfterHeaders }
        defer { server.stop() }
        let session = session()
        let url = URL(string: "http://127.0.0.1:\(server.port)/")!
        let failure = await error { _ = try await session.data(from: url) }
        #expect(failure?.code == .streamReset, "\(String(describing: failure))")
        #expect(failure?.detail.contains("INTERNAL_ERROR") == true, "\(String(describing: failure))")
        #expect(try await body(session, url) == "after the reset")
        #expect(server.connectionCount == 1)
    }

    @Test func endlessContinuationFramesEndTheConnectionWithAClearError() async throws {
        let server = try HostileHTTP2Server { _ in .endlessContinuation }
        defer { server.stop() }
        let failure = await error {
            _ = try await session().data(from: URL(string: "http://127.0.0.1:\(server.port)/")!)
        }
        #expect(failure?.code == .protocolError, "\(String(describing: failure))")
        #expect(failure?.detail.contains("HTTP/2") == true, "\(String(describing: failure))")
    }

    @Test func aHeaderBlockOverTheLimitResetsItsStream() async throws {
        let server = try HostileHTTP2Server { _ in .hugeHeaderBlock(bytes: 100_000) }
        defer { server.stop() }
        let failure = await error {
            _ = try await session().data(from: URL(string: "http://127.0.0.1:\(server.port)/")!)
        }
        #expect(failure?.code == .protocolError, "\(String(describing: failure))")
        #expect(failure?.detail.contains("header block over 65536 bytes") == true, "\(String(describing: failure))")
    }

    @Test func aHeaderFieldTooLargeToDecodeEndsTheConnectionWithAClearError() async throws {
        let server = try HostileHTTP2Server { _ in .hugeHeaderField(bytes: 100_000) }
        defer { server.stop() }
        let failure = await error {
            _ = try await session().data(from: URL(string: "http://127.0.0.1:\(server.port)/")!)
        }
        #expect(failure?.code == .protocolError, "\(String(describing: failure))")
        #expect(failure?.detail.contains("broke the protocol") == true, "\(String(describing: failure))")
    }

    @Test func aSettingsFloodEndsTheConnection() async throws {
        let server = try HostileHTTP2Server { _ in .settingsFlood(count: 5_000) }
        defer { server.stop() }
        let failure = await error {
            _ = try await session().data(from: URL(string: "http://127.0.0.1:\(server.port)/")!)
        }
        #expect(failure?.code == .protocolError, "\(String(describing: failure))")
    }

    @Test func aWindowThatNeverOpensTimesTheUploadOutAndTheConnectionStillAnswers() async throws {
        let server = try HostileHTTP2Server { _ in .windowNeverOpens }
        defer { server.stop() }
        let session = session { $0.requestTimeout = .seconds(2) }
        let url = URL(string: "http://127.0.0.1:\(server.port)/")!
        let started = ContinuousClock.now
        let failure = await error { _ = try await body(session, url, method: "PUT", body: Data(count: 200_000)) }
        #expect(failure?.code == .timeout, "\(String(describing: failure))")
        #expect(ContinuousClock.now - started < .seconds(30))
        #expect(try await body(session, url) == "ok")
        #expect(server.connectionCount == 1)
    }

    @Test func anIdleConnectionThatNoLongerAnswersIsFoundOutByAPingAndReplaced() async throws {
        let server = try HostileHTTP2Server { $0 == 0 ? .answerFirstThenSilent : .answer("a new connection") }
        defer { server.stop() }
        let clock = LoopClock.manual()
        let loop = try EventLoop(name: "ping-clock", clock: clock)
        defer { loop.shutdown() }
        let session = session(on: loop) {
            $0.http2IdlePingThreshold = .milliseconds(100)
            $0.connectTimeout = .seconds(1)
        }
        let url = URL(string: "http://127.0.0.1:\(server.port)/")!
        #expect(try await body(session, url) == "the only answer")
        clock.advance(by: .milliseconds(300))
        let second = Task { try await body(session, url) }
        // The PING that goes first waits for its answer up to the connect timeout of the loop's
        // clock: the clock moves past it until the request went to a new connection.
        for _ in 0..<100 where !(await eventually(within: .milliseconds(50)) { server.connectionCount == 2 }) {
            clock.advance(by: .seconds(1))
        }
        #expect(try await second.value == "a new connection")
        #expect(server.connectionCount == 2)
    }

    // A stream's timeout and its cancellation end that stream alone.

    @Test func theOnlyStreamsTimeoutEndsThatStreamAndLeavesTheConnection() async throws {
        let server = try HostileHTTP2Server { _ in .answerFirstThenSilent }
        defer { server.stop() }
        let session = session()
        let url = URL(string: "http://127.0.0.1:\(server.port)/")!
        #expect(try await body(session, url) == "the only answer")
        var request = HTTPRequest(url: url)
        request.timeout = .milliseconds(300)
        let failure = await error { _ = try await session.data(for: request) }
        #expect(failure?.code == .timeout)
        #expect(failure?.detail.contains("on stream 3") == true, "\(String(describing: failure))")
        #expect(session.pool.http2ConnectionCount == 1)
        #expect(server.connectionCount == 1)
    }

    /// The task's overall deadline follows the loop's clock: moved past it, the waiting stream
    /// ends with the resource timeout at once, and the connection stays.
    @Test func theResourceTimeoutFollowsTheLoopsClock() async throws {
        let server = try HostileHTTP2Server { _ in .answerFirstThenSilent }
        defer { server.stop() }
        let clock = LoopClock.manual()
        let loop = try EventLoop(name: "deadline-clock", clock: clock)
        defer { loop.shutdown() }
        let session = session(on: loop) {
            $0.resourceTimeout = .seconds(30)
            $0.requestTimeout = .seconds(600)
        }
        let url = URL(string: "http://127.0.0.1:\(server.port)/")!
        #expect(try await body(session, url) == "the only answer")
        let waiting = Task { try await session.data(for: HTTPRequest(url: url)) }
        try #require(await eventually(within: .seconds(30)) { server.requestHeadsReceived == 2 })
        clock.advance(by: .seconds(31))
        let failure = await error { _ = try await waiting.value }
        #expect(failure?.code == .timeout)
        #expect(failure?.detail.contains("resource timeout") == true, "\(String(describing: failure))")
        #expect(session.pool.http2ConnectionCount == 1)
    }

    @Test func cancellingTheOnlyStreamWhileItReadsEndsItAndLeavesTheConnection() async throws {
        let server = try HostileHTTP2Server { _ in .answerFirstThenSilent }
        defer { server.stop() }
        let session = session()
        let url = URL(string: "http://127.0.0.1:\(server.port)/")!
        #expect(try await body(session, url) == "the only answer")
        let waiting = Task { try await session.data(for: HTTPRequest(url: url)) }
        try #require(await eventually(within: .seconds(30)) { server.requestHeadsReceived == 2 })
        waiting.cancel()
        // The request's timeout is a minute: only the cancellation ends it sooner.
        let failure = await error { _ = try await waiting.value }
        #expect(failure?.code == .cancelled, "\(String(describing: failure))")
        #expect(session.pool.http2ConnectionCount == 1)
    }

    @Test func aGoAwayThatArrivesWhileTheConnectionIsIdleRetiresIt() async throws {
        let server = try HostileHTTP2Server { $0 == 0 ? .goAwayAfterFirstStream : .answer("second connection") }
        defer { server.stop() }
        let session = session()
        let url = URL(string: "http://127.0.0.1:\(server.port)/")!
        #expect(try await body(session, url) == "first")
        // Nobody reads the idle connection; what arrives unasked is read all the same.
        #expect(await eventually { session.pool.http2ConnectionCount == 0 })
        #expect(try await body(session, url) == "second connection")
        #expect(server.connectionCount == 2)
    }

    @Test func aLivelyConnectionAnswersThePingAndIsKept() async throws {
        let server = try HostileHTTP2Server { _ in .answer("kept") }
        defer { server.stop() }
        let clock = LoopClock.manual()
        let loop = try EventLoop(name: "ping-clock", clock: clock)
        defer { loop.shutdown() }
        let session = session(on: loop) { $0.http2IdlePingThreshold = .milliseconds(50) }
        let url = URL(string: "http://127.0.0.1:\(server.port)/")!
        for _ in 0..<3 {
            #expect(try await body(session, url) == "kept")
            clock.advance(by: .milliseconds(120))  // idle past the threshold: the next request pings first
        }
        #expect(server.connectionCount == 1)
    }

    @Test func anIdleConnectionClosesAfterTheIdleTimeoutEvenAfterManyRequests() async throws {
        let server = try HostileHTTP2Server { _ in .answer("ok") }
        defer { server.stop() }
        let clock = LoopClock.manual()
        let loop = try EventLoop(name: "idle-clock", clock: clock)
        defer { loop.shutdown() }
        let session = session(on: loop) { $0.idleTimeout = .milliseconds(300) }
        let url = URL(string: "http://127.0.0.1:\(server.port)/")!
        for _ in 0..<20 { #expect(try await body(session, url) == "ok") }
        clock.advance(by: .milliseconds(299))
        #expect(session.pool.http2ConnectionCount == 1)
        clock.advance(by: .milliseconds(1))
        #expect(await eventually { session.pool.http2ConnectionCount == 0 }, "retired after 300 ms idle")
        #expect(try await body(session, url) == "ok")
        #expect(server.connectionCount == 2)
    }
}
