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

    /// What made one request in five wait for its timeout: the stream's own task was reading the
    /// connection for every stream (it is the only one) when the reset the writer sent for it
    /// failed the stream. Driven step by step: the task reads a silent connection, then its
    /// stream is refused as the writer would report it; the task's read must end with it.
    @Test func aStreamThatFailsWhileItsTaskReadsForTheConnectionEndsThatRead() async throws {
        let server = try HostileHTTP2Server { _ in .answer("never asked") }
        defer { server.stop() }
        let (connection, http2) = try await loopbackHTTP2Connection(port: server.port)
        http2.start()
        // Every wait below is bounded by this deadline: a run that never reaches the state this
        // test drives ends without a verdict instead of spinning.
        let deadline = ContinuousClock.now + .seconds(20)
        // The test holds the writer role (once `start()`'s writer let it go): the request's
        // HEADERS never go out, so the server stays silent.
        while !http2.withState({ state in
            guard !state.flushing else { return false }
            state.flushing = true
            return true
        }) {
            try #require(ContinuousClock.now < deadline, "start()'s writer never let the writer role go")
            await Task.yield()
        }
        #expect(http2.reserve())
        let id = try http2.openStream(
            method: "GET",
            scheme: "http",
            authority: "127.0.0.1:\(server.port)",
            path: "/",
            fields: [:],
            hasBody: false
        )
        // Once the pump has read the server's SETTINGS and let the reading role go, the stream's
        // task reads the connection itself.
        while http2.withState({ $0.reading }) {
            guard ContinuousClock.now < deadline else {
                // The pump kept reading (a loaded machine): the case does not occur in this run.
                http2.finish(id)
                await connection.close()
                return
            }
            await Task.yield()
        }
        let waiting = Task { () -> (any Error)? in
            do {
                _ = try await http2.next(on: id, timeout: .seconds(3600))
                return nil
            } catch {
                return error
            }
        }
        // The server's SETTINGS acknowledgement may still arrive after the pump stopped: then the
        // pump takes the reading role back for the waiting stream, and the case this test drives
        // (the stream's own task reading) does not occur in this run.
        while http2.withState({ $0.directRead == nil }) {
            if http2.withState({ $0.reading && $0.directRead == nil }) || ContinuousClock.now > deadline {
                waiting.cancel()
                _ = await waiting.value
                http2.finish(id)
                await connection.close()
                return
            }
            await Task.yield()
        }
        var wake = HTTP2Connection.Wake()
        _ = http2.withState { state in
            http2.dispatch([.refused(stream: id, reason: "a test refused it")], &state, &wake)
        }
        for continuation in wake { continuation.resume() }
        // Only a task left waiting (the defect) is still waiting when this watchdog cancels it.
        let fired = LockedValue(false)
        let watchdog = Task {
            try await Task.sleep(for: .seconds(30))
            fired.withLock { $0 = true }
            waiting.cancel()
        }
        let outcome = await waiting.value
        watchdog.cancel()
        #expect(!fired.withLock { $0 }, "the failed stream's task kept waiting for bytes")
        let error = outcome as? SesameError
        #expect(error?.code == .protocolError, "\(String(describing: outcome))")
        #expect(error?.detail.contains("a test refused it") == true, "\(String(describing: outcome))")
        http2.finish(id)
        await connection.close()
    }
}
