import FoundationEssentials
import Glibc

/// One request's life in a ``Session``: created by the task methods, started with ``resume()``
/// (the async methods start it themselves), cancellable at any point.
public final class SessionTask: Sendable, Hashable {
    /// The state of a task.
    public enum State: Sendable, Equatable {
        /// Created or suspended: not running until ``SessionTask/resume()``.
        case suspended
        /// Running.
        case running
        /// Cancelled and not yet completed.
        case canceling
        /// Completed, with a response or an error.
        case completed
    }

    private struct Mutable {
        var state = State.suspended
        var currentRequest: HTTPRequest
        var response: HTTPResponse?
        var bytesReceived: Int64 = 0
        var bytesSent: Int64 = 0
        var work: Task<Void, Never>?
        var start: (@Sendable () -> Void)?
        var error: SesameError?
    }

    /// Unique within the process.
    public let taskIdentifier: Int
    /// The request as given.
    public let originalRequest: HTTPRequest
    /// The task's own delegate, asked before the session's.
    public let delegate: (any SessionTaskDelegate)?
    private let mutable: LockedValue<Mutable>
    private static let counter = LockedValue(0)

    init(request: HTTPRequest, delegate: (any SessionTaskDelegate)?) {
        taskIdentifier = Self.counter.withLock { counter in
            counter += 1
            return counter
        }
        originalRequest = request
        self.delegate = delegate
        mutable = LockedValue(Mutable(currentRequest: request))
    }

    /// The request being sent now (after redirects).
    public var currentRequest: HTTPRequest { mutable.withLock { $0.currentRequest } }
    /// The final response head, once it arrived.
    public var response: HTTPResponse? { mutable.withLock { $0.response } }
    /// Body bytes received so far (decoded).
    public var countOfBytesReceived: Int64 { mutable.withLock { $0.bytesReceived } }
    /// Request body bytes written to the connection so far (counted again when the body is sent again).
    public var countOfBytesSent: Int64 { mutable.withLock { $0.bytesSent } }
    /// The current state.
    public var state: State { mutable.withLock { $0.state } }

    /// Starts a suspended task; does nothing otherwise.
    public func resume() {
        let start = mutable.withLock { mutable -> (@Sendable () -> Void)? in
            guard mutable.state == .suspended else { return nil }
            mutable.state = .running
            defer { mutable.start = nil }
            return mutable.start
        }
        start?()
    }

    /// Cancels the task: it fails with ``SesameError/Code/cancelled`` and its connection is closed.
    public func cancel() {
        let work = mutable.withLock { mutable -> Task<Void, Never>? in
            guard mutable.state == .running || mutable.state == .suspended else { return nil }
            mutable.state = .canceling
            return mutable.work
        }
        work?.cancel()
    }

    // MARK: - Internal

    func prepare(_ start: @escaping @Sendable () -> Void) { mutable.withLock { $0.start = start } }
    func attach(_ work: Task<Void, Never>) {
        let cancelled = mutable.withLock { mutable -> Bool in
            mutable.work = work
            return mutable.state == .canceling
        }
        if cancelled { work.cancel() }
    }
    func markRunning() { mutable.withLock { if $0.state == .suspended { $0.state = .running } } }
    func update(request: HTTPRequest) { mutable.withLock { $0.currentRequest = request } }
    func update(response: HTTPResponse) { mutable.withLock { $0.response = response } }
    func received(_ count: Int) { mutable.withLock { $0.bytesReceived += Int64(count) } }
    /// Adds `count` body bytes sent; returns the total.
    func sent(_ count: Int) -> Int64 {
        mutable.withLock { mutable -> Int64 in
            mutable.bytesSent += Int64(count)
            return mutable.bytesSent
        }
    }
    func complete() { mutable.withLock { $0.state = .completed } }
    var isCancelled: Bool { mutable.withLock { $0.state == .canceling } }

    public static func == (lhs: SessionTask, rhs: SessionTask) -> Bool { lhs === rhs }
    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}
