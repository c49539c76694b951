import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Reads on a kept-alive connection: their deadlines and bytes that arrive with no read waiting.
@Suite struct ConnectionReadTests {
    @Test func aShortReadTimeoutAfterALongOneFiresOnTime() async throws {
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { _ in .raw("x", thenClose: false) }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let connection = try await Connection.connect(host: "127.0.0.1", port: server.port, tls: nil)
        try await connection.write(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        #expect(try await connection.read(timeout: .seconds(60)) == Array("x".utf8))
        // The connection's read deadline watch was set for a minute; this read's is much sooner.
        let started = ContinuousClock.now
        var error: SesameError?
        do {
            _ = try await connection.read(timeout: .milliseconds(200))
        } catch let caught as SesameError {
            error = caught
        }
        #expect(error?.code == .timeout)
        // Half the old deadline: under ThreadSanitizer, tests making keys and starting peers beside
        // this one have delayed its resumption by 20 seconds.
        #expect(ContinuousClock.now - started < .seconds(30))
    }

    @Test func bytesNobodyReadsAreTakenOnceThenTheSocketIsLeftAlone() async throws {
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { _ in .raw("x", thenClose: false) }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let loop = try EventLoop(name: "unsolicited")
        defer { loop.shutdown() }
        let connection = try await Connection.connect(host: "127.0.0.1", port: server.port, tls: nil, on: loop)
        let request = Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
        try await connection.write(request)
        #expect(try await connection.read(timeout: .seconds(60)) == Array("x".utf8))
        // Answers nobody waits for: the socket is still watched after the read, so the first is
        // taken in; from then on it is not, and the loop stays asleep while more arrive.
        try await connection.write(request)
        try await Task.sleep(for: .milliseconds(200))
        try await connection.write(request)
        let wakeUpsBefore = loop.wakeUpCount
        try await Task.sleep(for: .milliseconds(300))
        #expect(loop.wakeUpCount - wakeUpsBefore <= 1)
        var received: [UInt8] = []
        while received.count < 2 { received += try await connection.read(timeout: .seconds(10)) }
        #expect(received == Array("xx".utf8))
        await connection.close()
    }
}
