import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// `BlockingWorkThreads`: blocking calls run on threads of their own, never more than the limit,
/// oldest first.
@Suite struct BlockingWorkThreadsTests {
    /// A gate the pool's threads wait at (they may block; the test's task never does).
    private final class Gate: @unchecked Sendable {
        // @unchecked: NSCondition guards `open` and `inside`.
        private let condition = NSCondition()
        private var open = false
        private var inside = 0
        private var most = 0

        func pass() {
            condition.lock()
            inside += 1
            most = max(most, inside)
            condition.broadcast()
            while !open { condition.wait() }
            inside -= 1
            condition.unlock()
        }

        func release() {
            condition.lock()
            open = true
            condition.broadcast()
            condition.unlock()
        }

        /// How many are waiting at the gate, and the most that ever were at once.
        var counts: (inside: Int, most: Int) {
            condition.lock()
            defer { condition.unlock() }
            return (inside, most)
        }
    }

    @Test func atMostTheLimitRunAtOnceAndWorkStartsOldestFirst() async throws {
        let pool = BlockingWorkThreads(limit: 2)
        let gate = Gate()
        let started = Recorder<Int>()
        let finished = Recorder<Int>()
        for index in 0..<6 {
            pool.submit {
                started.append(index)
                gate.pass()
                finished.append(index)
            }
        }
        for _ in 0..<2000 where gate.counts.inside < 2 { try await Task.sleep(for: .milliseconds(5)) }
        // Whatever the pool's threads do next, a third may not start while two are blocked.
        try await Task.sleep(for: .milliseconds(50))
        #expect(gate.counts.inside == 2)
        #expect(Set(started.all) == [0, 1])
        gate.release()
        for _ in 0..<2000 where finished.all.count < 6 { try await Task.sleep(for: .milliseconds(5)) }
        #expect(Set(finished.all) == Set(0..<6))
        #expect(gate.counts.most == 2)
        let order = started.all
        #expect(Set(order.prefix(2)) == [0, 1])
        #expect(Array(order.dropFirst(2)) == [2, 3, 4, 5])
    }

    @Test func workRunsOnThreadsOfItsOwnWhichWaitForMore() async throws {
        let pool = BlockingWorkThreads(limit: 3)
        let threads = Recorder<UInt>()
        // One at a time: each finishes, and its thread waits again, before the next is submitted,
        // so the one thread does them all.
        for _ in 0..<5 {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                pool.submit {
                    threads.append(UInt(pthread_self()))
                    continuation.resume()
                }
            }
            for _ in 0..<2000 where pool.threadCounts.waiting < 1 { try await Task.sleep(for: .milliseconds(5)) }
        }
        #expect(!threads.all.contains(UInt(pthread_self())))
        #expect(Set(threads.all).count == 1)
        #expect(pool.threadCounts.started == 1)
    }
}
