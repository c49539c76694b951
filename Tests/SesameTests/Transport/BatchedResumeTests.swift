import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Reads the loop answers in one batch of events resume their callers together, each with its
/// own bytes.
@Suite struct BatchedResumeTests {
    @Test func readsAnsweredTogetherEachGetTheirOwnBytes() async throws {
        let count = 16
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { request in
            // Every answer after the same pause: they reach the loop close together.
            var response = LocalServer.Response.raw(String(request.target.dropFirst()), thenClose: false)
            response.delay = .milliseconds(100)
            return response
        }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let loop = try EventLoop(name: "batched")
        defer { loop.shutdown() }
        var connections: [Connection] = []
        for _ in 0..<count {
            connections.append(try await Connection.connect(host: "127.0.0.1", port: server.port, tls: nil, on: loop))
        }
        // Under load the answers may still reach the loop one by one: a few rounds.
        for round in 0..<5 where round == 0 || loop.batchedResumeCount == 0 {
            let answers = try await withThrowingTaskGroup(of: (Int, [UInt8]).self) { group in
                for (index, connection) in connections.enumerated() {
                    let request = Array("GET /\(round)-\(index) HTTP/1.1\r\nHost: x\r\n\r\n".utf8)
                    group.addTask { (index, try await connection.writeThenRead(request)) }
                }
                return try await group.reduce(into: [Int: [UInt8]]()) { $0[$1.0] = $1.1 }
            }
            for index in 0..<count {
                #expect(answers[index] == Array("\(round)-\(index)".utf8))
            }
        }
        #expect(loop.batchedResumeCount > 0)
        for connection in connections { await connection.close() }
    }
}
