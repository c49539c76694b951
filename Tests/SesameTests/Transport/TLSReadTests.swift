import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Decrypted reads: bytes are decrypted straight into arrays sized from what arrived, whatever the
/// caller asks for and however the records are split across socket reads.
@Suite struct TLSReadTests {
    @Test func everyByteArrivesInOrderWhateverTheReadSizes() async throws {
        // Bytes that differ from one position to the next, so that a lost, doubled or reordered
        // piece shows.
        let body = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        var configuration = LocalServer.Configuration(identity: try sharedPKI.leaf())
        configuration.handler = { _ in .bytes(body) }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let connection = try await Connection.connect(host: "localhost", port: server.port, tls: trustingTestRoot())
        var received = try await connection.writeThenRead(Array("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        let sizes = [1, 7, 1000, 16_383, 16_384, 16_385, 65_536, 200_000]
        var reads = 0
        let marker = Array("\r\n\r\n".utf8)
        var expected = Int.max
        while received.count < expected {
            let size = sizes[reads % sizes.count]
            let bytes = try await connection.read(maxLength: size)
            try #require(!bytes.isEmpty)
            #expect(bytes.count <= size)
            received += bytes
            reads += 1
            if expected == .max, let head = received.firstRange(of: marker) { expected = head.upperBound + body.count }
        }
        await connection.close()
        let head = try #require(received.firstRange(of: marker))
        #expect(Array(received[head.upperBound...]) == body)
    }

    @Test func aReadStartedBeforeAnyRecordWaitsForTheSocket() async throws {
        // The read finds nothing to decrypt when it starts: it waits, and is answered once the
        // delayed response's records arrive.
        var configuration = LocalServer.Configuration(identity: try sharedPKI.leaf())
        configuration.handler = { _ in
            var response = LocalServer.Response.text("late")
            response.delay = .milliseconds(150)
            return response
        }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let connection = try await Connection.connect(host: "localhost", port: server.port, tls: trustingTestRoot())
        var received = try await connection.writeThenRead(Array("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        while !received.suffix(4).elementsEqual("late".utf8) {
            let bytes = try await connection.read(maxLength: 65_536)
            try #require(!bytes.isEmpty)
            received += bytes
        }
        #expect(String(decoding: received, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        await connection.close()
    }

    @Test func aPeerThatClosesAfterItsLastRecordEndsTheStream() async throws {
        // The last record and the close arrive together: the bytes come first, then the end.
        var configuration = LocalServer.Configuration(identity: try sharedPKI.leaf())
        configuration.handler = { _ in .raw("HTTP/1.1 200 OK\r\n\r\nuntil the close", thenClose: true) }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let connection = try await Connection.connect(host: "localhost", port: server.port, tls: trustingTestRoot())
        var received = try await connection.writeThenRead(Array("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        while true {
            let bytes = try await connection.read(maxLength: 65_536)
            if bytes.isEmpty { break }
            received += bytes
        }
        #expect(String(decoding: received, as: UTF8.self) == "HTTP/1.1 200 OK\r\n\r\nuntil the close")
        await connection.close()
    }
}
