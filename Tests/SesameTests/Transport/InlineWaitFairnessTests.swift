import Foundation
import SesameTesting
import Testing

@testable import Sesame

// A caller's thread that waited for an answer itself gives the other tasks a turn before it goes on.
extension InlineWaitTests {
    /// Concurrent tasks sharing one thread (a process on one processor has one concurrency thread)
    /// are concurrent: they open connections of their own, as on more threads. Before, the first task
    /// answered every read of its loop on that thread and never gave it up, so the others started
    /// only when it had finished, and all of them ran one after another over its one connection
    /// (in two runs of five).
    @Test func concurrentTasksOnOneThreadOpenConnectionsOfTheirOwn() async throws {
        let origin = try SesameTests.server(tls: true) { _ in .text("ok") }
        defer { origin.shutdown() }
        let session = testSession {
            $0.maximumConnectionsPerHost = 8
            $0.inlineWaitLimit = .seconds(5)  // every answer counts as quick, even under sanitizers
        }
        let thread = try EventLoop(name: "the one concurrency thread")
        defer { thread.shutdown() }
        let target = url(origin, "/")
        let statuses = try await withTaskExecutorPreference(thread) {
            try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        var statuses: [Int] = []
                        for _ in 0..<8 { statuses.append(try await session.data(from: target).1.status) }
                        return statuses
                    }
                }
                return try await group.reduce(into: []) { $0 += $1 }
            }
        }
        #expect(statuses == Array(repeating: 200, count: 64))
        #expect(origin.connections.count > 1)
    }
}
