import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Reads on a kept-alive connection: their deadlines, on a loop whose clock the test moves, and
/// bytes that arrive with no read waiting.
@Suite struct ConnectionReadTests {
    /// A server that answers each request with "x" and keeps the connection.
    static func server() throws -> LocalServer {
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { _ in .raw("x", thenClose: false) }
        return try LocalServer(configuration)
    }

    static let request = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)

    /// A connection to `server` on a loop of its own whose clock the test moves.
    static func connectOnManualClock(to server: LocalServer) async throws -> (Connection, LoopClock) {
        let clock = LoopClock.manual()
        let loop = try EventLoop(name: "read-clock", clock: clock)
        do {
            return (try await Connection.connect(host: "127.0.0.1", port: server.port, tls: nil, on: loop), clock)
        } catch {
            loop.shutdown()
            throw error
        }
    }

    /// Waits (yielding, without sleeping) until a read waits on `connection`.
    static func readStarted(on connection: Connection) async throws {
        for _ in 0..<100_000 {
            if try await connection.loop.onLoop({ connection.isReading }) { return }
            await Task.yield()
        }
        Issue.record("the read never began")
    }

    @Test func aReadFailsWhenTheLoopsClockPassesItsTimeout() async throws {
        let server = try Self.server()
        defer { server.shutdown() }
        let (connection, clock) = try await Self.connectOnManualClock(to: server)
        defer { connection.loop.shutdown() }
        #expect(try await connection.writeThenRead(Self.request, timeout: .seconds(60)) == Array("x".utf8))
        let silent = Task { try await connection.read(timeout: .seconds(5)) }
        try await Self.readStarted(on: connection)
        clock.advance(by: .seconds(4))
        #expect(try await connection.loop.onLoop { connection.isReading }, "not yet due")
        clock.advance(by: .seconds(1))
        let error = await #expect(throws: SesameError.self) { try await silent.value }
        #expect(error?.code == .timeout)
        #expect(error?.detail.contains("sent nothing for 5.0 seconds") == true, "\(String(describing: error))")
        #expect(try await connection.loop.onLoop { connection.isKnownClosed }, "a timed-out read closes")
    }

    @Test func aQuietReadEndsAtItsDeadlineAndTheConnectionGoesOn() async throws {
        let server = try Self.server()
        defer { server.shutdown() }
        let (connection, clock) = try await Self.connectOnManualClock(to: server)
        defer { connection.loop.shutdown() }
        let waited = Task { try await connection.read(maxLength: 100, waitingAtMost: .seconds(1)) }
        try await Self.readStarted(on: connection)
        clock.advance(by: .seconds(1))
        #expect(try await waited.value == nil)
        #expect(try await connection.writeThenRead(Self.request, timeout: .seconds(60)) == Array("x".utf8))
        await connection.close()
    }

    @Test func bytesNobodyReadsWaitForTheNextRead() async throws {
        let server = try Self.server()
        defer { server.shutdown() }
        let connection = try await Connection.connect(host: "127.0.0.1", port: server.port, tls: nil)
        // Three answers nobody waits for: the connection takes them in (up to its bound) and the
        // reads that come later get them, in order.
        for _ in 0..<3 { try await connection.write(Self.request) }
        var received: [UInt8] = []
        while received.count < 3 { received += try await connection.read(timeout: .seconds(60)) }
        #expect(received == Array("xxx".utf8))
        await connection.close()
    }
}
