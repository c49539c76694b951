import Foundation
import SesameTesting
import Testing

@testable import Sesame

// What ends a wait on the caller's thread early: cancellation, the loop shutting down, a read
// timeout, and the connection failing before the wait has begun.
extension InlineWaitTests {
    /// Sends a request the server never answers, runs `interrupt` on a thread of its own 200 ms
    /// later (the task may hold one of the few concurrency threads), and returns the code of the
    /// error the exchange ended with (nil when it did not fail with a ``SesameError``) and how
    /// long it took.
    private func interruptedExchange(
        on connection: Connection,
        by interrupt: @escaping @Sendable (Task<[UInt8], any Error>) -> Void
    ) async -> (code: SesameError.Code?, took: Duration) {
        let request = request
        let started = ContinuousClock.now
        let task = Task { try await connection.writeThenRead(request) }
        Thread.detachNewThread {
            Thread.sleep(forTimeInterval: 0.2)
            interrupt(task)
        }
        var code: SesameError.Code?
        do {
            _ = try await task.value
        } catch let error as SesameError {
            code = error.code
        } catch {}
        return (code, ContinuousClock.now - started)
    }

    @Test func cancellingATaskWaitingOnItsThreadEndsTheWaitAtOnce() async throws {
        let server = try stallingServer()
        defer { server.shutdown() }
        let loop = try EventLoop(name: "cancel")
        defer { loop.shutdown() }
        let connection = try await connect(to: server, limit: Self.longLimit, on: loop)
        let (code, took) = await interruptedExchange(on: connection) { $0.cancel() }
        #expect(code == .cancelled)
        #expect(took < Self.longLimit / 2)
    }

    @Test(arguments: [Duration.zero, longLimit])
    func shuttingTheLoopDownFailsAWaitingRead(limit: Duration) async throws {
        // With a zero limit the read waits on the loop; with a minute, on the caller's thread.
        let server = try stallingServer()
        defer { server.shutdown() }
        let loop = try EventLoop(name: "shut-down")
        let connection = try await connect(to: server, limit: limit, on: loop)
        let (code, took) = await interruptedExchange(on: connection) { _ in loop.shutdown() }
        #expect(code == .eventLoopShutDown)
        #expect(took < Self.longLimit / 2)
    }

    @Test func aReadTimeoutEndsAWaitOnTheCallersThread() async throws {
        let server = try stallingServer()
        defer { server.shutdown() }
        let loop = try EventLoop(name: "timeout")
        defer { loop.shutdown() }
        let connection = try await connect(to: server, limit: Self.longLimit, on: loop)
        let started = ContinuousClock.now
        var error: SesameError?
        do {
            _ = try await connection.writeThenRead(request, timeout: .milliseconds(200))
        } catch let caught as SesameError {
            error = caught
        }
        #expect(error?.code == .timeout)
        #expect(ContinuousClock.now - started < Self.longLimit / 2)
    }

    @Test func aConnectionFailingJustBeforeTheCallersThreadWaitsEndsTheWait() async throws {
        // The loop fails the connection after the read chose to wait on its caller's thread and
        // before that thread's first ppoll(2); sockets opened then take the lowest free numbers,
        // which would include the connection's had it been closed: the wait must still end.
        let server = try stallingServer()
        defer { server.shutdown() }
        let loop = try EventLoop(name: "gap")
        defer { loop.shutdown() }
        let connection = try await connect(to: server, limit: Self.longLimit, on: loop)
        let descriptor = try #require(await onLoop(loop) { connection.channel?.socket.fd })
        let squatters = LockedValue<[Int32]>([])
        defer { for squatter in squatters.withLock({ $0 }) { close(squatter) } }
        await onLoop(loop) {
            connection.inlineWaitWillStart = { [weak connection] in  // weak: no cycle
                guard let connection else { return }
                let failed = DispatchSemaphore(value: 0)
                loop.execute {
                    connection.fail(SesameError(.cancelled, "failed before the wait"))
                    failed.signal()
                }
                failed.wait()
                squatters.withLock { squatters in
                    for _ in 0..<8 { squatters.append(socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)) }
                }
            }
        }
        try await settle(loop)  // so that the read finds the loop free (else the loop serves it)
        let started = ContinuousClock.now
        var code: SesameError.Code?
        do {
            // The timeout only keeps a read the loop served from hanging the test.
            _ = try await connection.writeThenRead(request, timeout: Self.longLimit / 3)
        } catch let error as SesameError {
            code = error.code
        }
        #expect(code == .cancelled)
        #expect(ContinuousClock.now - started < Self.longLimit / 2)
        #expect(!squatters.withLock { $0 }.isEmpty, "the read waited on the caller's thread")
        #expect(!squatters.withLock { $0 }.contains(descriptor), "the waited-on descriptor stayed open")
    }

    /// Runs `work` on `loop` and returns its result.
    private func onLoop<T: Sendable>(_ loop: EventLoop, _ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in loop.execute { continuation.resume(returning: work()) } }
    }
}
