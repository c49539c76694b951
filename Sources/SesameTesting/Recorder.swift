import Dispatch
import Sesame

/// Collects values from callbacks that run on any thread (delegates, handshake hooks), for a test
/// to inspect afterwards, or to wait for without polling:
///
/// ```swift
/// let events = Recorder<String>()
/// // ... a delegate appends "response" ...
/// #expect(await events.waitUntil(within: .seconds(10)) { $0.contains("response") })
/// ```
public final class Recorder<Value: Sendable>: Sendable {
    private struct Waiter {
        let id: Int
        let condition: @Sendable ([Value]) -> Bool
        let continuation: CheckedContinuation<Bool, Never>
    }

    private struct State {
        var values: [Value] = []
        var waiters: [Waiter] = []
        var nextWaiter = 0
    }

    private let state = LockedValue(State())

    /// An empty recorder.
    public init() {}

    /// Adds a value, and wakes the waits whose condition it meets; safe from any thread.
    public func append(_ value: Value) {
        let met = state.withLock { state -> [CheckedContinuation<Bool, Never>] in
            state.values.append(value)
            guard !state.waiters.isEmpty else { return [] }
            let values = state.values
            let met = state.waiters.filter { $0.condition(values) }
            state.waiters.removeAll { $0.condition(values) }
            return met.map(\.continuation)
        }
        for continuation in met { continuation.resume(returning: true) }
    }

    /// Everything appended so far, in order.
    public var all: [Value] { state.withLock { $0.values } }

    /// Suspends the calling task until `condition` holds for the values recorded, or `limit` has
    /// passed. The wait holds no thread: an append that meets the condition resumes it.
    /// - Returns: whether the condition held in time.
    public func waitUntil(within limit: Duration, _ condition: @escaping @Sendable ([Value]) -> Bool) async -> Bool {
        await withCheckedContinuation { continuation in
            let id = state.withLock { state -> Int? in
                guard !condition(state.values) else { return nil }
                state.nextWaiter += 1
                state.waiters.append(Waiter(id: state.nextWaiter, condition: condition, continuation: continuation))
                return state.nextWaiter
            }
            guard let id else {
                continuation.resume(returning: true)
                return
            }
            let seconds = Double(limit.components.seconds) + Double(limit.components.attoseconds) * 1e-18
            DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { [self] in
                let expired = state.withLock { state -> Waiter? in
                    guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                    return state.waiters.remove(at: index)
                }
                expired?.continuation.resume(returning: false)
            }
        }
    }

    /// Suspends the calling task until at least `count` values were recorded, or `limit` has
    /// passed (``waitUntil(within:_:)``).
    public func reached(_ count: Int, within limit: Duration) async -> Bool {
        await waitUntil(within: limit) { $0.count >= count }
    }
}
