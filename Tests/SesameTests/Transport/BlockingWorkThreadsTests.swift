import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// `BlockingWorkThreads`: blocking calls run on threads of their own, never more than the limit,
/// oldest first.
@Suite struct BlockingWorkThreadsTests {
    /// A gate the pool's threads wait at (they may block; the test's task never does).
    private final class Gate: @unchecked Sendable {
        // @unchecked: NSCondition guards `open`.
        private let condition = NSCondition()
        private var open = false

        func pass() {
            condition.lock()
            while !open { condition.wait() }
            condition.unlock()
        }

        func release() {
            condition.lock()
            open = true
            condition.broadcast()
            condition.unlock()
        }

        /// How many jobs are inside, and the most that ever were at once.
        final class Count: @unchecked Sendable {
            // @unchecked: NSCondition guards the counts.
            private let condition = NSCondition()
            private var inside = 0
            private var most = 0

            func enter() {
                condition.lock()
                inside += 1
                most = max(most, inside)
                condition.unlock()
            }

            func leave() {
                condition.lock()
                inside -= 1
                condition.unlock()
            }

            var counts: (now: Int, most: Int) {
                condition.lock()
                defer { condition.unlock() }
                return (inside, most)
            }
        }
    }

    @Test func atMostTheLimitRunAtOnceAndWorkStartsOldestFirst() async throws {
        let pool = BlockingWorkThreads(limit: 2)
        let gates = (0..<6).map { _ in Gate() }
        let started = Recorder<Int>()
        let finished = Recorder<Int>()
        let entered = Recorder<Int>()
        let inside = Gate.Count()
        for index in 0..<6 {
            pool.submit {
                started.append(index)
                inside.enter()
                entered.append(index)
                gates[index].pass()
                inside.leave()
                finished.append(index)
            }
        }
        try #require(await entered.reached(2, within: .seconds(60)))
        // Two threads, both blocked: the other four jobs wait in the queue, and no third thread
        // was started for them.
        let counts = pool.threadCounts
        #expect(counts.started == 2 && counts.waiting == 0 && counts.queued == 4)
        #expect(inside.counts.now == 2)
        #expect(Set(started.all) == [0, 1])
        // Each release frees one thread, which must take the oldest work still queued: the order
        // in which jobs start is seen one job at a time (two threads starting jobs together may
        // record them in either order, so the order is not read off one run of them all).
        for (released, next) in zip(0..<4, 2..<6) {
            gates[released].release()
            try #require(await started.reached(next + 1, within: .seconds(60)))
            try #require(await entered.reached(next + 1, within: .seconds(60)))
            // The freed thread took exactly one job, the oldest; the other thread is still blocked.
            #expect(Array(started.all.dropFirst(2)) == Array(2...next))
            #expect(pool.threadCounts.queued == 5 - next)
        }
        for gate in gates { gate.release() }
        try #require(await finished.reached(6, within: .seconds(60)))
        #expect(Set(finished.all) == Set(0..<6))
        #expect(inside.counts.most == 2)
        #expect(Set(started.all.prefix(2)) == [0, 1])
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
            _ = await eventually { pool.threadCounts.waiting >= 1 }
        }
        #expect(!threads.all.contains(UInt(pthread_self())))
        #expect(Set(threads.all).count == 1)
        #expect(pool.threadCounts.started == 1)
    }
}
