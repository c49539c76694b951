import Foundation
import Sesame

/// Sesame's challenge disposition, under a name Apple's nested one does not shadow.
typealias SesameDisposition = AuthChallengeDisposition

/// A session (`URLSession`) over a Sesame `Session`: one connection pool, one configuration, one
/// delegate whose methods are called on `delegateQueue`.
open class URLSession: NSObject, @unchecked Sendable {
    // @unchecked: mutable state (tasks, invalidation) is behind `lock`.
    /// How a delegate answers a challenge.
    public enum AuthChallengeDisposition: Int, Sendable {
        /// Answer with the credential given.
        case useCredential = 0
        /// Do what the system would do with no delegate method.
        case performDefaultHandling = 1
        /// Cancel the task: it fails with `NSURLErrorCancelled`.
        case cancelAuthenticationChallenge = 2
        /// Refuse this space and try the response's next challenge; a server trust gets the default
        /// evaluation, a client-certificate request is answered with no certificate.
        case rejectProtectionSpace = 3
    }

    /// What to do with a response whose head arrived.
    public enum ResponseDisposition: Int, Sendable {
        /// Cancel the task.
        case cancel = 0
        /// Go on with the task.
        case allow = 1
        /// Not supported by Sesame: treated as `.allow`.
        case becomeDownload = 2
        /// Not supported by Sesame: treated as `.allow`.
        case becomeStream = 3
    }

    /// A session with the default configuration and no delegate.
    public static let shared: URLSession = {
        let session = URLSession(configuration: .default)
        session.isShared = true
        return session
    }()

    /// True for ``shared`` alone (it asks the registered `URLProtocol` classes).
    private(set) var isShared = false

    /// A copy of the configuration the session was made with.
    public let configuration: URLSessionConfiguration
    /// Kept (strongly, as Apple's) until the session is invalidated.
    public private(set) var delegate: (any URLSessionDelegate)?
    /// Where delegate methods and completion handlers run (a serial queue unless one was given).
    public let delegateQueue: OperationQueue
    /// A description of the session for people, kept as given.
    open var sessionDescription: String?

    /// The Sesame session underneath (its delegate is the bridge to ``delegate``).
    let sesame: Session
    private let lock = NSLock()
    private var running: [Int: URLSessionTask] = [:]
    private var invalidated = false
    private var invalidateWhenDone = false

    /// A session with `configuration`, no delegate and its own serial delegate queue.
    public convenience init(configuration: URLSessionConfiguration) {
        self.init(configuration: configuration, delegate: nil, delegateQueue: nil)
    }

    /// A session with `configuration` (copied: later changes do not reach it), `delegate` (kept
    /// until the session is invalidated) and `queue` for delegate calls (a serial queue of its own
    /// when nil).
    public init(
        configuration: URLSessionConfiguration,
        delegate: (any URLSessionDelegate)?,
        delegateQueue queue: OperationQueue?
    ) {
        self.configuration = configuration.copy() as! URLSessionConfiguration  // safe: copy(with:) makes one
        self.delegate = delegate
        if let queue {
            delegateQueue = queue
        } else {
            delegateQueue = OperationQueue()
            delegateQueue.maxConcurrentOperationCount = 1
        }
        let bridge = SessionBridge()
        sesame = Session(configuration: self.configuration.sesameConfiguration(), delegate: bridge)
        super.init()
        bridge.owner = self
    }

    // MARK: - Tasks

    /// A data task loading `url`, not resumed.
    open func dataTask(with url: URL) -> URLSessionDataTask { dataTask(with: URLRequest(url: url)) }

    /// A data task loading `request`, not resumed; its callbacks go to the session's delegate.
    open func dataTask(with request: URLRequest) -> URLSessionDataTask {
        URLSessionDataTask(session: self, request: request, kind: .data)
    }

    /// A data task loading `url`, not resumed, that hands the body, response and error to
    /// `completionHandler` instead of the delegate's data callbacks.
    @preconcurrency
    open func dataTask(
        with url: URL,
        completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDataTask { dataTask(with: URLRequest(url: url), completionHandler: completionHandler) }

    /// A data task loading `request`, not resumed, that hands the body, response and error to
    /// `completionHandler` instead of the delegate's data callbacks.
    @preconcurrency
    open func dataTask(
        with request: URLRequest,
        completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDataTask {
        URLSessionDataTask(session: self, request: request, kind: .data, completion: .data(completionHandler))
    }

    /// An upload task sending `bodyData` as `request`'s body, not resumed.
    open func uploadTask(with request: URLRequest, from bodyData: Data) -> URLSessionUploadTask {
        var request = request
        request.httpBody = bodyData
        return URLSessionUploadTask(session: self, request: request, kind: .upload)
    }

    /// An upload task sending `bodyData` as `request`'s body, not resumed, that hands the response
    /// to `completionHandler`.
    @preconcurrency
    open func uploadTask(
        with request: URLRequest,
        from bodyData: Data?,
        completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionUploadTask {
        var request = request
        request.httpBody = bodyData
        return URLSessionUploadTask(
            session: self,
            request: request,
            kind: .upload,
            completion: .data(completionHandler)
        )
    }

    /// An upload of the request's own body (its `httpBodyStream`, or a body Sesame's modules
    /// set). Sesame never asks for a new stream: a streamed body that a challenge would need
    /// again fails the task instead.
    open func uploadTask(withStreamedRequest request: URLRequest) -> URLSessionUploadTask {
        URLSessionUploadTask(session: self, request: request, kind: .upload)
    }

    /// An upload task sending the file at `fileURL` as `request`'s body (streamed from disk), not
    /// resumed.
    open func uploadTask(with request: URLRequest, fromFile fileURL: URL) -> URLSessionUploadTask {
        URLSessionUploadTask(session: self, request: request, kind: .upload, bodyFile: fileURL)
    }

    /// An upload task sending the file at `fileURL`, not resumed, that hands the response to
    /// `completionHandler`.
    @preconcurrency
    open func uploadTask(
        with request: URLRequest,
        fromFile fileURL: URL,
        completionHandler: @escaping @Sendable (Data?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionUploadTask {
        URLSessionUploadTask(
            session: self,
            request: request,
            kind: .upload,
            completion: .data(completionHandler),
            bodyFile: fileURL
        )
    }

    /// A download task saving `url`'s body to a temporary file, not resumed.
    open func downloadTask(with url: URL) -> URLSessionDownloadTask { downloadTask(with: URLRequest(url: url)) }

    /// A download task saving `request`'s response body to a temporary file, not resumed.
    open func downloadTask(with request: URLRequest) -> URLSessionDownloadTask {
        URLSessionDownloadTask(session: self, request: request, kind: .download)
    }

    /// A download task for `url`, not resumed, that hands the temporary file to `completionHandler`
    /// (removed when it returns).
    @preconcurrency
    open func downloadTask(
        with url: URL,
        completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDownloadTask { downloadTask(with: URLRequest(url: url), completionHandler: completionHandler) }

    /// A download task for `request`, not resumed, that hands the temporary file to
    /// `completionHandler` (removed when it returns).
    @preconcurrency
    open func downloadTask(
        with request: URLRequest,
        completionHandler: @escaping @Sendable (URL?, URLResponse?, (any Error)?) -> Void
    ) -> URLSessionDownloadTask {
        URLSessionDownloadTask(
            session: self,
            request: request,
            kind: .download,
            completion: .download(completionHandler)
        )
    }

    // MARK: - Invalidation

    /// Cancels every task, then tells the delegate the session is invalid.
    open func invalidateAndCancel() {
        let tasks = lock.withLock { () -> [URLSessionTask] in
            invalidated = true
            return Array(running.values)
        }
        for task in tasks { task.cancel() }
        becomeInvalid(ifIdle: tasks.isEmpty)
    }

    /// Lets running tasks finish, then tells the delegate the session is invalid; no task starts after.
    open func finishTasksAndInvalidate() {
        let idle = lock.withLock { () -> Bool in
            invalidated = true
            invalidateWhenDone = true
            return running.isEmpty
        }
        becomeInvalid(ifIdle: idle)
    }

    /// The tasks that are running or suspended (a cancelled task is on its way out, as on Apple's).
    @preconcurrency
    open func getAllTasks(completionHandler: @escaping @Sendable ([URLSessionTask]) -> Void) {
        let tasks = lock.withLock { Array(running.values) }.filter { $0.state == .running || $0.state == .suspended }
        delegateQueue.addOperation { completionHandler(tasks) }
    }

    /// The same tasks by kind: data tasks (upload tasks excluded), upload tasks, download tasks.
    @preconcurrency
    open func getTasksWithCompletionHandler(
        _ completionHandler:
            @escaping @Sendable ([URLSessionDataTask], [URLSessionUploadTask], [URLSessionDownloadTask])
            -> Void
    ) {
        getAllTasks { tasks in
            completionHandler(
                tasks.compactMap { $0 is URLSessionUploadTask ? nil : $0 as? URLSessionDataTask },
                tasks.compactMap { $0 as? URLSessionUploadTask },
                tasks.compactMap { $0 as? URLSessionDownloadTask }
            )
        }
    }

    /// ``getAllTasks(completionHandler:)`` awaited.
    open var allTasks: [URLSessionTask] {
        get async {
            await withCheckedContinuation { continuation in getAllTasks { continuation.resume(returning: $0) } }
        }
    }

    /// ``getTasksWithCompletionHandler(_:)`` awaited.
    open var tasks: ([URLSessionDataTask], [URLSessionUploadTask], [URLSessionDownloadTask]) {
        get async {
            await withCheckedContinuation { continuation in
                getTasksWithCompletionHandler { continuation.resume(returning: ($0, $1, $2)) }
            }
        }
    }

    private func becomeInvalid(ifIdle idle: Bool) {
        guard idle else {
            lock.withLock { invalidateWhenDone = true }
            return
        }
        let delegate = UncheckedBox(
            lock.withLock { () -> (any URLSessionDelegate)? in
                defer { self.delegate = nil }
                return self.delegate
            }
        )
        delegateQueue.addOperation { [self] in
            delegate.value?.urlSession(self, didBecomeInvalidWithError: nil)
            sesame.closeIdleConnections()
        }
    }

    // MARK: - Running tasks

    func start(_ task: URLSessionTask) {
        let refused = lock.withLock { () -> Bool in
            guard !invalidated else { return true }
            running[task.taskIdentifier] = task
            return false
        }
        guard !refused else {
            return finish(
                task,
                error: URLError(
                    .cancelled,
                    userInfo: [
                        NSLocalizedDescriptionKey: "cancelled",
                        NSLocalizedFailureReasonErrorKey: "the session was invalidated before the task started",
                        NSURLErrorFailingURLErrorKey: task.originalRequest?.url as Any,
                    ]
                )
            )
        }
        TaskRunner(session: self, task: task).start()
    }

    /// Completes `task` once: completion handler, or the delegates' last calls, on the queue.
    func finish(_ task: URLSessionTask, error: (any Error)?, data: Data? = nil, location: URL? = nil) {
        guard task.complete(error: error) else { return }
        let response = task.response
        let call = UncheckedBox((self, task))
        delegateQueue.addOperation {
            let (session, task) = call.value
            switch task.completion {
            case .data(let handler)?:
                handler(error == nil ? (data ?? task.gatheredData) : nil, response, error)
                if task.callsTaskDelegateForAsyncForm, let own = task.delegate {
                    DelegateDispatch.first([own]) { $0.urlSession(session, task: task, didCompleteWithError: error) }
                }
            case .download(let handler)?:
                handler(error == nil ? location : nil, response, error)
                if task.callsTaskDelegateForAsyncForm, let own = task.delegate {
                    DelegateDispatch.first([own]) { $0.urlSession(session, task: task, didCompleteWithError: error) }
                }
                if let location { try? FileManager.default.removeItem(at: location) }
            case nil:
                if let location, let downloadTask = task as? URLSessionDownloadTask {
                    // Required by the protocol: the first delegate that adopts it implements it.
                    session.delegates(for: task, as: (any URLSessionDownloadDelegate).self).first?
                        .urlSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location)
                }
                if let location { try? FileManager.default.removeItem(at: location) }
                DelegateDispatch.first(session.delegates(for: task, as: (any URLSessionTaskDelegate).self)) {
                    $0.urlSession(session, task: task, didCompleteWithError: error)
                }
            }
            session.taskFinished(task)
            task.release()
        }
    }

    private func taskFinished(_ task: URLSessionTask) {
        let idle = lock.withLock { () -> Bool in
            running[task.taskIdentifier] = nil
            return invalidateWhenDone && running.isEmpty
        }
        if idle { becomeInvalid(ifIdle: true) }
    }

    /// The task's own delegate when it has one, else the session's, as the task-level protocol.
    /// The delegates asked for a task's callback, in Apple's order: the task's own, then the
    /// session's (each when it adopts the protocol that declares the callback).
    func delegates<Delegate>(for task: URLSessionTask, as type: Delegate.Type) -> [Delegate] {
        [task.delegate as? Delegate, lock.withLock { delegate } as? Delegate].compactMap { $0 }
    }

    /// The delegates asked for a task's data, response and progress callbacks: none for a task
    /// with a completion handler, only its own for an `async` form given a delegate.
    func progressDelegates<Delegate>(for task: URLSessionTask, as type: Delegate.Type) -> [Delegate] {
        if task.completion == nil { return delegates(for: task, as: type) }
        return task.callsTaskDelegateForAsyncForm ? [task.delegate as? Delegate].compactMap { $0 } : []
    }

    /// Runs `body` on the delegate queue and waits for it (delegate methods are called there, one
    /// at a time on a serial queue; waiting keeps a slow delegate from piling work up).
    func onQueue(_ body: @escaping @Sendable () -> Void) async {
        let handoff = Handoff<Void>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            delegateQueue.addOperation {
                body()
                _ = handoff.put(())
                continuation.resume()
            }
        }
        _ = handoff.take()
    }

    /// Calls a completion-handler method on the delegate queue and waits for its first answer.
    func onQueue<T: Sendable>(answering body: @escaping @Sendable (@escaping @Sendable (T) -> Void) -> Void) async -> T
    {
        let handoff = Handoff<T>()
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let once = Once(continuation)
            delegateQueue.addOperation { body { if handoff.put($0) { once.resume(()) } } }
        }
        return handoff.take()!  // safe: the continuation is resumed only after the answer is put
    }
}

/// A value handed from the delegate queue to the task awaiting it, through a lock: what the
/// delegate wrote before answering (the objects in the answer included) is then seen by the
/// awaiting side as written. A continuation alone orders it too, but invisibly to
/// ThreadSanitizer, whose runtime does not see the Swift concurrency library's atomics.
final class Handoff<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `value` is behind `lock`.
    private let lock = NSLock()
    private var value: Value?

    /// Keeps the first value; false for later ones (a handler called twice).
    func put(_ new: Value) -> Bool {
        lock.withLock {
            guard value == nil else { return false }
            value = new
            return true
        }
    }

    func take() -> Value? { lock.withLock { value } }
}

/// One result, set once from a completion handler, awaited once.
final class ResultBox<T>: @unchecked Sendable {
    // @unchecked: every field is behind `lock`.
    private let lock = NSLock()
    private var result: Result<T, any Error>?
    private var waiter: CheckedContinuation<UncheckedBox<Result<T, any Error>>, Never>?

    func set(_ value: Result<T, any Error>) {
        let waiter = lock.withLock { () -> CheckedContinuation<UncheckedBox<Result<T, any Error>>, Never>? in
            guard result == nil else { return nil }
            result = value
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: UncheckedBox(value))
    }

    func peek() -> Result<T, any Error>? { lock.withLock { result } }

    func wait(starting start: () -> Void) async throws -> T {
        let box = await withCheckedContinuation { continuation in
            let ready = lock.withLock { () -> Result<T, any Error>? in
                if let result { return result }
                waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: UncheckedBox(ready)) } else { start() }
        }
        return try box.value.get()
    }
}
