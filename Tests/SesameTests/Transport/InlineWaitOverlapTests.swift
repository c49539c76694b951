import Foundation
import SesameTesting
import Testing

@testable import Sesame

// Concurrent reads keep callers off their threads for a while after they overlap.
extension InlineWaitTests {
    @Test func afterReadsOverlapCallersWaitOnTheirThreadsOnlyOnceReadsComeOneAtATimeAgain() async throws {
        let stalled = try stallingServer()
        defer { stalled.shutdown() }
        let server = try server()
        defer { server.shutdown() }
        let loop = try EventLoop(name: "overlap")
        defer { loop.shutdown() }
        // The default limit: the stalled read holds a concurrency thread for a millisecond, then
        // waits on the loop.
        let waiting = try await connect(to: stalled, on: loop)
        let connection = try await connect(to: server, limit: .seconds(2), on: loop)
        let request = request
        let reader = Task { try await waiting.writeThenRead(request) }
        try await Task.sleep(for: .milliseconds(100))  // the stalled read waits on the loop by now
        // A read that starts while another waits goes through the loop.
        #expect(try await connection.writeThenRead(request) == Array("x".utf8))
        await waiting.close()
        _ = await reader.result
        // Alone again: the next reads still go through the loop, until enough came one at a time.
        for _ in 1..<InlineWaitPolicy.aloneReadsRequired {
            try await settle(loop)
            let wakeUpsBefore = loop.wakeUpCount
            #expect(try await connection.writeThenRead(request) == Array("x".utf8))
            #expect(loop.wakeUpCount > wakeUpsBefore)
        }
        // Then callers wait on their own threads again.
        #expect(try await quietExchanges(10, on: connection) >= 5)
        await connection.close()
    }
}
