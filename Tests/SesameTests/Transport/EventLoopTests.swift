import Foundation
import SesameTesting
import Testing

@testable import Sesame

@Suite struct EventLoopTests {
    @Test func workPostedFromManyThreadsRunsOnTheLoopInOrderPerThread() async throws {
        let loop = try EventLoop(name: "order")
        defer { loop.shutdown() }
        let seen = Recorder<(producer: Int, index: Int)>()
        let offLoop = Recorder<Bool>()
        await withTaskGroup(of: Void.self) { group in
            for producer in 0..<8 {
                group.addTask {
                    for index in 0..<200 {
                        loop.execute {
                            if !loop.inEventLoop { offLoop.append(true) }
                            seen.append((producer, index))
                        }
                    }
                }
            }
        }
        await withCheckedContinuation { continuation in loop.execute { continuation.resume() } }
        #expect(offLoop.all.isEmpty)
        #expect(!loop.inEventLoop)
        for producer in 0..<8 {
            #expect(seen.all.filter { $0.producer == producer }.map(\.index) == Array(0..<200))
        }
    }

    @Test func timersFireInDeadlineOrderAndCancelledOnesNever() async throws {
        let loop = try EventLoop(name: "timers")
        defer { loop.shutdown() }
        let fired = Recorder<String>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            loop.execute {
                _ = loop.scheduleTimer(after: .milliseconds(60)) { fired.append("60") }
                _ = loop.scheduleTimer(after: .milliseconds(20)) { fired.append("20") }
                let cancelled = loop.scheduleTimer(after: .milliseconds(40)) { fired.append("40") }
                _ = loop.scheduleTimer(after: .milliseconds(10)) {
                    loop.cancelTimer(cancelled)
                    // A timer may schedule another from inside its work.
                    _ = loop.scheduleTimer(after: .milliseconds(70)) {
                        fired.append("nested")
                        continuation.resume()
                    }
                }
            }
        }
        #expect(fired.all == ["20", "60", "nested"])
    }

    @Test func workPostedAfterShutdownIsRefused() throws {
        let loop = try EventLoop(name: "shutdown")
        loop.shutdown()
        #expect(loop.execute {} == false)
        loop.shutdown()  // idempotent
    }

    @Test func anIdleLoopDoesNotSpin() async throws {
        let loop = try EventLoop(name: "idle")
        defer { loop.shutdown() }
        await withCheckedContinuation { continuation in loop.execute { continuation.resume() } }
        let before = loop.wakeUpCount
        try await Task.sleep(for: .milliseconds(300))
        #expect(loop.wakeUpCount - before == 0)
    }

    @Test func theTimerHeapOrdersManyDeadlines() {
        var heap = TimerHeap()
        var order: [Int] = []
        let start = ContinuousClock.now
        let offsets = [5, 3, 9, 1, 7, 2, 8, 6, 4, 0]
        var handles: [Int: TimerHandle] = [:]
        for offset in offsets {
            handles[offset] = heap.schedule(at: start + .milliseconds(offset)) { order.append(offset) }
        }
        heap.cancel(handles[4]!)
        for work in heap.takeDue(now: start + .milliseconds(100)) { work() }
        #expect(order == [0, 1, 2, 3, 5, 6, 7, 8, 9])
        #expect(heap.nextDeadline() == nil)
    }

    @Test func cancelledFarOffTimersDoNotPileUpInTheHeap() {
        // A read's watchdog or a task's deadline is set far ahead and cancelled at once, for every
        // request: the heap must not keep them (and their closures) until their deadlines.
        var heap = TimerHeap()
        let start = ContinuousClock.now
        let kept = (0..<10).map { index in heap.schedule(at: start + .milliseconds(index)) {} }
        for index in 0..<100_000 {
            let handle = heap.schedule(at: start + .seconds(3_600 + index)) {}
            heap.cancel(handle)
        }
        #expect(heap.storedCount < 200, "\(heap.storedCount) entries for 10 live timers")
        // Compaction keeps the order and the live timers.
        heap.cancel(kept[3])
        var fired = 0
        for work in heap.takeDue(now: start + .seconds(1)) {
            work()
            fired += 1
        }
        #expect(fired == 9)
    }
}
