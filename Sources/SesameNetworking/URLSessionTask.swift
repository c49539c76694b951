import Foundation
import Sesame

/// One load in a session (`URLSessionTask`). Created suspended: call ``resume()``.
open class URLSessionTask: NSObject, @unchecked Sendable {
    // @unchecked: mutable state is behind `lock`; `delegate` is set before `resume`, as Apple asks.
    /// Where a task is in its life.
    public enum State: Int, Sendable {
        /// Loading.
        case running = 0
        /// Created and not resumed, or suspended.
        case suspended = 1
        /// Cancelled, not yet completed.
        case canceling = 2
        /// Completed: the delegate has been told.
        case completed = 3
    }

    enum Kind {
        case data
        case upload
        case download
    }

    /// A number unique among the session's tasks.
    public let taskIdentifier: Int
    /// The request the task was made with.
    public let originalRequest: URLRequest?
    /// The task's own delegate, asked before the session's (set it before `resume`).
    open var delegate: (any URLSessionTaskDelegate)?
    /// A description of the task for people, kept as given.
    open var taskDescription: String?
    /// Kept as given (0.5); without effect: requests are not prioritized.
    open var priority: Float = 0.5

    /// What the caller gets at the end, when it gave a completion handler.
    enum Completion {
        case data(@Sendable (Data?, URLResponse?, (any Error)?) -> Void)
        case download(@Sendable (URL?, URLResponse?, (any Error)?) -> Void)
    }

    let kind: Kind
    let completion: Completion?
    /// The file an upload task reads its body from.
    let bodyFile: URL?
    /// The session, strongly while the task runs (a running task keeps its session, as Apple's).
    var session: URLSession? {
        lock.withLock { runningSession ?? idleSession.value }
    }
    private var runningSession: URLSession?
    private let idleSession: WeakSession
    let lock = NSLock()
    private var mutableState = State.suspended
    private var current: URLRequest?
    private var received: URLResponse?
    private var failure: (any Error)?
    private var bytesReceived: Int64 = 0
    private var bytesSent: Int64 = 0
    private var bytesExpectedToSend: Int64?
    /// For an `async` form with a task delegate: the delegate gets the task's callbacks while the
    /// body is gathered here for the caller (Apple's `data(for:delegate:)`).
    private var reportsToTaskDelegate = false
    private var gathered = Data()
    private var work: Task<Void, Never>?
    private var sesameTask: SessionTask?
    /// What stops a load that is neither a Swift task nor a Sesame task alone (a URLProtocol's).
    private var cancelHook: (@Sendable () -> Void)?
    private static let counter = NSLock()
    nonisolated(unsafe) private static var next = 0

    init(session: URLSession, request: URLRequest, kind: Kind, completion: Completion? = nil, bodyFile: URL? = nil) {
        taskIdentifier = Self.counter.withLock {
            Self.next += 1
            return Self.next
        }
        originalRequest = request
        current = request
        idleSession = WeakSession(session)
        self.kind = kind
        self.completion = completion
        self.bodyFile = bodyFile
    }

    /// Where the task is in its life.
    open var state: State { lock.withLock { mutableState } }
    /// The request being loaded: the original, or the last redirect's.
    open var currentRequest: URLRequest? { lock.withLock { current } }
    /// The response, once its head arrived.
    open var response: URLResponse? { lock.withLock { received } }
    /// Why the task failed, once it completed with an error.
    open var error: (any Error)? { lock.withLock { failure } }
    /// Body bytes received so far (after decompression).
    open var countOfBytesReceived: Int64 { lock.withLock { bytesReceived } }
    /// The response's `Content-Length`, or -1 when unknown.
    open var countOfBytesExpectedToReceive: Int64 { response?.expectedContentLength ?? -1 }
    /// Request body bytes sent so far.
    open var countOfBytesSent: Int64 { lock.withLock { bytesSent } }
    /// The body's length: known once sending starts (-1 for a stream of unknown length); before
    /// that, the length of the request's `httpBody` or body file.
    open var countOfBytesExpectedToSend: Int64 {
        if let expected = lock.withLock({ bytesExpectedToSend }) { return expected }
        if let file = bodyFile,
            let size = try? FileManager.default.attributesOfItem(atPath: file.path)[.size] as? NSNumber
        {
            return size.int64Value
        }
        return Int64(originalRequest?.httpBody?.count ?? 0)
    }

    /// Starts (or, for a task never started, starts once) the task.
    open func resume() {
        let start = lock.withLock { () -> Bool in
            guard mutableState == .suspended, work == nil, sesameTask == nil else {
                if mutableState == .suspended { mutableState = .running }
                return false
            }
            mutableState = .running
            runningSession = idleSession.value
            return true
        }
        guard start, let session else { return }
        session.start(self)
    }

    /// Sesame does not pause a running transfer: a started task keeps running.
    open func suspend() {}

    /// Cancels the task: it completes with `URLError.cancelled`.
    open func cancel() {
        let (work, task, hook, wasSuspended) = lock.withLock {
            () -> (Task<Void, Never>?, SessionTask?, (@Sendable () -> Void)?, Bool) in
            guard mutableState == .running || mutableState == .suspended else { return (nil, nil, nil, false) }
            let suspended = mutableState == .suspended && self.work == nil && sesameTask == nil
            mutableState = .canceling
            return (self.work, sesameTask, cancelHook, suspended)
        }
        if let hook { hook() } else { work?.cancel() }
        task?.cancel()
        if wasSuspended, let session {
            session.finish(self, error: URLError.from(SesameError.cancelledTask, url: originalRequest?.url))
        }
    }

    // MARK: - Internal

    func attach(_ work: Task<Void, Never>) {
        let cancelled = lock.withLock { () -> Bool in
            self.work = work
            cancelHook = nil
            return mutableState == .canceling
        }
        if cancelled { work.cancel() }
    }

    /// `work` is cancelled by calling `onCancel` (which makes it finish the task as cancelled).
    func attach(_ work: Task<Void, Never>, onCancel: @escaping @Sendable () -> Void) {
        let cancelled = lock.withLock { () -> Bool in
            self.work = work
            cancelHook = onCancel
            return mutableState == .canceling
        }
        if cancelled { onCancel() }
    }

    func attach(_ task: SessionTask) {
        let cancelled = lock.withLock { () -> Bool in
            sesameTask = task
            cancelHook = nil
            return mutableState == .canceling
        }
        if cancelled { task.cancel() }
    }

    var isCanceling: Bool { lock.withLock { mutableState == .canceling } }
    func update(request: URLRequest) { lock.withLock { current = request } }
    func update(response: URLResponse) { lock.withLock { received = response } }

    /// Set before `resume` by the `async` forms that were given a delegate.
    var callsTaskDelegateForAsyncForm: Bool {
        get { lock.withLock { reportsToTaskDelegate } }
        set { lock.withLock { reportsToTaskDelegate = newValue } }
    }

    /// Keeps body bytes for the completion of an `async` form that streams to its delegate.
    func gather(_ data: Data) { lock.withLock { gathered.append(data) } }
    var gatheredData: Data { lock.withLock { gathered } }
    func add(received count: Int) { lock.withLock { bytesReceived += Int64(count) } }
    func update(sent total: Int64, expected: Int64) {
        lock.withLock {
            bytesSent = total
            bytesExpectedToSend = expected
        }
    }

    /// Marks the task completed; false when it already was.
    func complete(error: (any Error)?) -> Bool {
        lock.withLock {
            guard mutableState != .completed else { return false }
            mutableState = .completed
            failure = error
            work = nil
            sesameTask = nil
            cancelHook = nil
            return true
        }
    }

    /// The session no longer needs keeping once the task's last callback ran.
    func release() { lock.withLock { runningSession = nil } }

    final class WeakSession: @unchecked Sendable {
        // @unchecked: immutable weak reference.
        weak var value: URLSession?
        init(_ value: URLSession) { self.value = value }
    }
}

/// A task that delivers the response body in memory (`URLSessionDataTask`).
open class URLSessionDataTask: URLSessionTask, @unchecked Sendable {}
/// A data task that sends a body from memory or a file (`URLSessionUploadTask`).
open class URLSessionUploadTask: URLSessionDataTask, @unchecked Sendable {}
/// A task that saves the response body to a file (`URLSessionDownloadTask`).
open class URLSessionDownloadTask: URLSessionTask, @unchecked Sendable {}

extension SesameError {
    /// What a task cancelled before it started fails with.
    static var cancelledTask: any Error { CancellationError() }
}
