import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// A task's thread waits for a quick answer itself (`inlineWaitLimit`) instead of suspending until
/// the loop delivers it, only when that is cheap, and never past the limit.
///
/// The limits here are far above the default (3 ms), so that what ends a wait is visible; they
/// stay a few seconds at most where a test lets a wait run its course, since a waiting thread is
/// one the other tests running in parallel do not have. Where a wait must end early (an interrupt,
/// a read timeout), the limit is a minute and the bound half of it: the whole suite runs on this
/// machine's two concurrency threads, and tests doing synchronous work (key generation, starting
/// peers) have delayed other tasks' resumption by over eight seconds under ThreadSanitizer, which
/// tighter bounds took for a wait that did not end.
@Suite struct InlineWaitTests {
    let request = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
    /// The limit of waits that must end early (see above).
    static let longLimit = Duration.seconds(60)

    /// A server answering "x" to each request, after `delay` when one is given for that request
    /// (numbered from 0).
    func server(delays: @escaping @Sendable (Int) -> Duration? = { _ in nil }) throws -> LocalServer {
        let count = LockedValue(0)
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { _ in
            let index = count.withLock { value -> Int in
                defer { value += 1 }
                return value
            }
            var response = LocalServer.Response.raw("x", thenClose: false)
            response.delay = delays(index)
            return response
        }
        return try LocalServer(configuration)
    }

    /// A server answering every request with a 200 "ok".
    private func okServer() throws -> LocalServer {
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { _ in .text("ok") }
        return try LocalServer(configuration)
    }

    /// A server that reads requests and never answers.
    func stallingServer() throws -> LocalServer {
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { _ in .stall }
        return try LocalServer(configuration)
    }

    /// A plain connection to `server` on `loop`.
    func connect(
        to server: LocalServer,
        limit: Duration = .milliseconds(1),
        on loop: EventLoop
    ) async throws -> Connection {
        try await Connection.connect(host: "127.0.0.1", port: server.port, tls: nil, inlineWaitLimit: limit, on: loop)
    }

    /// Waits until the loop has run everything posted so far (it then waits in epoll_wait).
    func settle(_ loop: EventLoop) async throws {
        await withCheckedContinuation { continuation in loop.execute { continuation.resume() } }
        try await Task.sleep(for: .milliseconds(10))
    }

    /// Runs `count` exchanges answered "x", each once the loop waits, and returns how many of
    /// them did not wake the loop. The loop may be between waits when an exchange starts (then it
    /// serves the read itself); it waits most of the time, so when callers wait on their own
    /// threads, most exchanges run there alone.
    func quietExchanges(_ count: Int, on connection: Connection) async throws -> Int {
        var quiet = 0
        for _ in 0..<count {
            try await settle(connection.loop)
            let wakeUpsBefore = connection.loop.wakeUpCount
            #expect(try await connection.writeThenRead(request) == Array("x".utf8))
            if connection.loop.wakeUpCount == wakeUpsBefore { quiet += 1 }
        }
        return quiet
    }

    private func answersQuickly(_ connection: Connection) async -> Bool {
        await withCheckedContinuation { continuation in
            connection.loop.execute { continuation.resume(returning: connection.answersQuickly) }
        }
    }

    @Test func aQuickAnswerIsReadOnTheCallersThreadWithoutWakingTheLoop() async throws {
        let server = try server()
        defer { server.shutdown() }
        let loop = try EventLoop(name: "inline")
        defer { loop.shutdown() }
        let connection = try await connect(to: server, limit: .seconds(2), on: loop)
        #expect(try await quietExchanges(20, on: connection) >= 10)
        #expect(await answersQuickly(connection))
        await connection.close()
    }

    @Test func aBodyArrivingInPiecesIsReadOnTheCallersThreadWithoutWakingTheLoop() async throws {
        // 2 MiB: more than the socket buffers hold, so most reads wait for the server to write
        // more (and small enough not to hold a concurrency thread for long under the sanitizers).
        let size = 2 << 20
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { _ in .bytes([UInt8](repeating: 0x61, count: size)) }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let loop = try EventLoop(name: "body")
        defer { loop.shutdown() }
        let connection = try await connect(to: server, limit: .seconds(2), on: loop)
        try await settle(loop)
        let wakeUpsBefore = loop.wakeUpCount
        var received = try await connection.writeThenRead(request)
        let headEnd = try #require(received.indices.first { received[$0...].starts(with: Array("\r\n\r\n".utf8)) }) + 4
        var reads = 1
        while received.count < headEnd + size {
            let bytes = try await connection.read(maxLength: 65_536)
            try #require(!bytes.isEmpty)
            received += bytes
            reads += 1
        }
        #expect(received.count == headEnd + size)
        #expect(reads > 16)
        // The loop is not woken for the next bytes between reads (it would then take the read
        // from the caller's thread, one more wake-up for each).
        #expect(loop.wakeUpCount - wakeUpsBefore <= 2)
        await connection.close()
    }

    /// A session on a loop of its own, with `server`'s answers waited for on the caller's thread.
    private func inlineSession(on loop: EventLoop) -> Session {
        var configuration = SessionConfiguration()
        configuration.inlineWaitLimit = .seconds(2)
        configuration.proxy = .none
        return Session(configuration: configuration, eventLoop: loop)
    }

    @Test func keptAliveRequestsReadOnTheCallersThreadDoNotWakeTheLoop() async throws {
        let server = try okServer()
        defer { server.shutdown() }
        let loop = try EventLoop(name: "kept-alive")
        defer { loop.shutdown() }
        let session = inlineSession(on: loop)
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/"))
        _ = try await session.data(for: HTTPRequest(url: url))
        try await settle(loop)
        // Between requests the connection sits in the pool, watched only for the server closing
        // it: the next answer does not wake the loop (it would take the read from the caller).
        let wakeUpsBefore = loop.wakeUpCount
        for _ in 0..<100 {
            let (body, response) = try await session.data(for: HTTPRequest(url: url))
            #expect(response.status == 200 && body == Data("ok".utf8))
        }
        #expect(loop.wakeUpCount - wakeUpsBefore <= 2)  // 0 here; 8 of 30 when the pool watched it for input
        #expect(Set(server.requests.map(\.connectionIndex)) == [0])
    }

    @Test func theLoopLearnsWhenTheServerClosesAConnectionReadOnTheCallersThread() async throws {
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { _ in .raw("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", thenClose: true) }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let loop = try EventLoop(name: "closed-idle")
        defer { loop.shutdown() }
        let session = inlineSession(on: loop)
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/"))
        _ = try await session.data(for: HTTPRequest(url: url))
        let deadline = ContinuousClock.now + .seconds(5)
        while session.pool.idleConnectionsKnownClosed == 0, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(session.pool.idleConnectionsKnownClosed == 1)
        // The loop read up to the end and stopped watching the socket (it is not woken again).
        try await settle(loop)
        let wakeUpsBefore = loop.wakeUpCount
        try await Task.sleep(for: .milliseconds(100))
        #expect(loop.wakeUpCount == wakeUpsBefore)
        let post = HTTPRequest(url: url, method: "POST", body: .data(Data("x".utf8)))
        #expect(try await session.data(for: post).0 == Data("ok".utf8))
        #expect(server.requests.map(\.connectionIndex) == [0, 1])
    }

    @Test func aZeroLimitLeavesEveryAnswerToTheLoop() async throws {
        let server = try server()
        defer { server.shutdown() }
        let loop = try EventLoop(name: "no-inline")
        defer { loop.shutdown() }
        let connection = try await connect(to: server, limit: .zero, on: loop)
        for _ in 0..<5 {
            try await settle(loop)
            let wakeUpsBefore = loop.wakeUpCount
            #expect(try await connection.writeThenRead(request) == Array("x".utf8))
            #expect(loop.wakeUpCount > wakeUpsBefore)
        }
        await connection.close()
    }

    @Test func aSlowAnswerGoesBackToTheLoopUntilAnAnswerComesQuicklyAgain() async throws {
        // The first answer takes 300 ms, the next ones none.
        let server = try server { $0 == 0 ? .milliseconds(300) : nil }
        defer { server.shutdown() }
        let loop = try EventLoop(name: "slow")
        defer { loop.shutdown() }
        let connection = try await connect(to: server, limit: .milliseconds(100), on: loop)
        let started = ContinuousClock.now
        #expect(try await connection.writeThenRead(request) == Array("x".utf8))
        #expect(ContinuousClock.now - started >= .milliseconds(300))
        #expect(!(await answersQuickly(connection)))
        // The loop serves the next read; its quick answer lets later ones wait on the caller's thread.
        try await settle(loop)
        var wakeUpsBefore = loop.wakeUpCount
        #expect(try await connection.writeThenRead(request) == Array("x".utf8))
        #expect(loop.wakeUpCount > wakeUpsBefore)
        #expect(await answersQuickly(connection))
        var quiet = false
        for _ in 0..<20 where !quiet {
            try await settle(loop)
            wakeUpsBefore = loop.wakeUpCount
            #expect(try await connection.writeThenRead(request) == Array("x".utf8))
            quiet = loop.wakeUpCount == wakeUpsBefore
        }
        #expect(quiet)
        await connection.close()
    }

    @Test func waitsThatRunOutSendTheNextReadsThroughTheLoopForLongerEachTime() async throws {
        // Requests 0 and 3 are answered late, the others at once.
        let server = try server { [0, 3].contains($0) ? .milliseconds(1500) : nil }
        defer { server.shutdown() }
        let loop = try EventLoop(name: "backoff")
        defer { loop.shutdown() }
        let connection = try await connect(to: server, limit: .milliseconds(500), on: loop)
        var states: [String] = []
        for _ in 0..<8 {
            try await settle(loop)
            #expect(try await connection.writeThenRead(request) == Array("x".utf8))
            states.append(
                await withCheckedContinuation { continuation in
                    loop.execute {
                        let backoff = connection.inlineWaitBackoff
                        continuation.resume(returning: "\(backoff.skipsLeft)/\(backoff.length)")
                    }
                }
            )
        }
        // 0 runs out (1 read through the loop to come); 1 is late-marked, so the loop serves it
        // and finds it quick; 2 is the read through the loop; 3 runs out again (2 to come); 4 is
        // served by the loop; 5 and 6 are the two; 7 is waited for on the caller's thread again.
        #expect(states == ["1/1", "1/1", "0/1", "2/2", "2/2", "1/2", "0/2", "0/0"])
        await connection.close()
    }

    @Test func anotherWaitingReadOnTheLoopKeepsCallersOffTheirThreads() async throws {
        let stalled = try stallingServer()
        defer { stalled.shutdown() }
        let server = try server()
        defer { server.shutdown() }
        let loop = try EventLoop(name: "shared")
        defer { loop.shutdown() }
        let waiting = try await connect(to: stalled, on: loop)
        let reader = Task { try await waiting.writeThenRead(request) }
        let connection = try await connect(to: server, limit: .seconds(2), on: loop)
        try await Task.sleep(for: .milliseconds(100))  // the stalled read waits on the loop by now
        for _ in 0..<5 {
            try await settle(loop)
            let wakeUpsBefore = loop.wakeUpCount
            #expect(try await connection.writeThenRead(request) == Array("x".utf8))
            #expect(loop.wakeUpCount > wakeUpsBefore)
        }
        reader.cancel()
        _ = await reader.result
        await connection.close()
    }

    @Test func aSessionWithAZeroLimitLeavesAnswersToItsLoop() async throws {
        let server = try okServer()
        defer { server.shutdown() }
        // A loop of its own, so that no other test's work wakes it.
        let loop = try EventLoop(name: "session")
        defer { loop.shutdown() }
        var sessionConfiguration = SessionConfiguration()
        sessionConfiguration.inlineWaitLimit = .zero
        sessionConfiguration.proxy = .none
        let session = Session(configuration: sessionConfiguration, eventLoop: loop)
        let url = try #require(URL(string: "http://127.0.0.1:\(server.port)/"))
        _ = try await session.data(for: HTTPRequest(url: url))
        for _ in 0..<3 {
            try await settle(loop)
            let wakeUpsBefore = loop.wakeUpCount
            let (body, response) = try await session.data(for: HTTPRequest(url: url))
            #expect(response.status == 200 && body == Data("ok".utf8))
            #expect(loop.wakeUpCount > wakeUpsBefore)
        }
    }
}
