import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// `EventLoop.runOnLoop`: a caller's thread does the loop's work while the loop waits, and posts it
/// while the loop is busy.
@Suite struct RunOnLoopTests {
    /// Waits until the loop has run everything posted so far (it then waits in epoll_wait).
    private func settle(_ loop: EventLoop) async throws {
        await withCheckedContinuation { continuation in loop.execute { continuation.resume() } }
        try await Task.sleep(for: .milliseconds(10))
    }

    @Test func aWaitingLoopLetsTheCallersThreadDoItsWorkWithoutWakingIt() async throws {
        let loop = try EventLoop(name: "borrowed")
        defer { loop.shutdown() }
        var ranInline = false
        // The loop may be between waits at any one moment; it waits most of the time.
        for _ in 0..<50 where !ranInline {
            try await settle(loop)
            let caller = UInt(pthread_self())
            let wakeUpsBefore = loop.wakeUpCount
            let turnsBefore = loop.callerTurns
            let seen = Recorder<(thread: UInt, onLoop: Bool)>()
            loop.runOnLoop { seen.append((UInt(pthread_self()), loop.inEventLoop)) }
            guard let first = seen.all.first, first.thread == caller else {
                try await settle(loop)  // it was posted: let it run before trying again
                continue
            }
            ranInline = true
            #expect(loop.callerTurns == turnsBefore + 1)
            #expect(first.onLoop)
            #expect(loop.wakeUpCount == wakeUpsBefore)
        }
        #expect(ranInline)
        #expect(!loop.inEventLoop)
    }

    @Test func aBusyLoopGetsTheWorkPosted() async throws {
        let loop = try EventLoop(name: "busy")
        defer { loop.shutdown() }
        try await settle(loop)
        let release = DispatchSemaphore(value: 0)
        let busy = DispatchSemaphore(value: 0)
        loop.execute {
            busy.signal()
            release.wait()  // holds the loop (a test only: real work never blocks it)
        }
        busy.wait()
        let caller = UInt(pthread_self())
        let seen = Recorder<UInt>()
        #expect(loop.runOnLoop { seen.append(UInt(pthread_self())) })
        #expect(seen.all.isEmpty)
        release.signal()
        try await settle(loop)
        #expect(seen.all.count == 1)
        #expect(seen.all.first != caller)
    }

    @Test func aTimerScheduledByTheCallersThreadWakesTheWaitingLoop() async throws {
        let loop = try EventLoop(name: "timer")
        defer { loop.shutdown() }
        let fired = Recorder<Int>()
        let inline = Recorder<Int>()
        for attempt in 0..<50 where inline.all.isEmpty {
            try await settle(loop)
            let caller = UInt(pthread_self())
            loop.runOnLoop {
                guard UInt(pthread_self()) == caller else { return }  // posted: try again
                inline.append(attempt)
                _ = loop.scheduleTimer(after: .milliseconds(20)) { fired.append(attempt) }
            }
        }
        // The loop waited with no deadline at all; only the wake-up makes it see the new timer.
        _ = await fired.reached(1, within: .seconds(5))
        #expect(inline.all.count == 1)
        #expect(fired.all == inline.all)
    }
}
