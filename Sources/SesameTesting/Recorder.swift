import Sesame

/// Collects values from callbacks that run on any thread (delegates, handshake hooks), for a test
/// to inspect afterwards.
public final class Recorder<Value: Sendable>: Sendable {
    private let values = LockedValue<[Value]>([])

    /// An empty recorder.
    public init() {}

    /// Adds a value; safe from any thread.
    public func append(_ value: Value) { values.withLock { $0.append(value) } }

    /// Everything appended so far, in order.
    public var all: [Value] { values.withLock { $0 } }
}
