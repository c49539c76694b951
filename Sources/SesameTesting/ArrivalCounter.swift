import Dispatch
import FoundationEssentials

/// Counts arrivals (requests a server saw, calls a fake made) and lets a test wait until a count
/// is reached, without polling: a waiting task holds no thread, a waiting server thread sleeps on
/// a condition. Each wait is bounded; it returns false when the count was not reached in time.
///
/// ```swift
/// let arrivals = ArrivalCounter()
/// configuration.handler = { request in arrivals.arrive(); return .text("ok") }
/// // ...
/// #expect(await arrivals.reached(64, within: .seconds(10)))
/// ```
public final class ArrivalCounter: @unchecked Sendable {
    // @unchecked: `count` and `waiters` are only touched while `condition` is locked.
    private let condition = ThreadLock()
    private var count = 0
    private var waiters: [(id: Int, target: Int, continuation: CheckedContinuation<Bool, Never>)] = []
    private var nextWaiter = 0

    /// A counter at zero.
    public init() {}

    /// How many arrivals there were so far.
    public var value: Int {
        condition.lock()
        defer { condition.unlock() }
        return count
    }

    /// Counts one arrival and wakes whoever waits for the new count.
    public func arrive() {
        condition.lock()
        count += 1
        let reached = waiters.filter { $0.target <= count }
        waiters.removeAll { $0.target <= count }
        condition.broadcast()
        condition.unlock()
        for waiter in reached { waiter.continuation.resume(returning: true) }
    }

    /// Suspends the calling task until the count is at least `target`, or `limit` has passed.
    /// - Returns: whether the count was reached.
    public func reached(_ target: Int, within limit: Duration) async -> Bool {
        await withCheckedContinuation { continuation in
            condition.lock()
            guard count < target else {
                condition.unlock()
                continuation.resume(returning: true)
                return
            }
            let id = nextWaiter
            nextWaiter += 1
            waiters.append((id, target, continuation))
            condition.unlock()
            let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) * 1e-18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                condition.lock()
                let index = waiters.firstIndex { $0.id == id }
                let expired = index.map { waiters.remove(at: $0) }
                condition.unlock()
                expired?.continuation.resume(returning: false)
            }
        }
    }

    /// Blocks the calling thread until the count is at least `target`, or `limit` has passed: for
    /// a server's own threads, never for a task.
    /// - Returns: whether the count was reached.
    public func waitOnThread(until target: Int, within limit: Duration) -> Bool {
        let deadline = ContinuousClock.now + limit
        condition.lock()
        defer { condition.unlock() }
        while count < target {
            guard condition.wait(until: deadline) else { return count >= target }
        }
        return true
    }
}
