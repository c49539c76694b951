import Sesame

/// AFNetworking's `AFURLSessionManager`: a URLSession whose delegate it is, tasks with progress
/// blocks and completion handlers that get the serialized response, and the security policy
/// answering server-trust challenges.
///
/// Challenges, in order (seed 004's session method, AFNetworking 4's task method):
/// 1. Connection-level ones (server trust, client certificates) go first to the block set with
///    ``setSessionDidReceiveAuthenticationChallenge(_:)``, whose disposition and credential are the
///    answer.
/// 2. Otherwise (and for 401/407): the handler set with ``setAuthenticationChallengeHandler(_:)``,
///    else the block set with ``setTaskDidReceiveAuthenticationChallenge(_:)``, else the session
///    block, else: a server trust is evaluated by ``securityPolicy`` (accepted with
///    `URLCredential(trust:)`, or refused, and the task fails with -1202,
///    `NSURLErrorServerCertificateUntrusted`), anything else gets default handling (credential
///    storage, the request's URL credentials).
///
/// Progress blocks run on the manager's operation queue; completion handlers on ``completionQueue``
/// (the main queue unless set). As with AFNetworking, the session keeps the manager until
/// ``invalidateSessionCancelingTasks(_:resetSession:)``.
open class AFURLSessionManager: NSObject, URLSessionDataDelegate, URLSessionDownloadDelegate, @unchecked Sendable {
    // @unchecked: the mutable state is behind `lock`; per-task state is used on the operation
    // queue, one callback at a time.
    let lock = NSLock()
    /// The operation queue delegate callbacks run on (one at a time).
    public let operationQueue: OperationQueue
    private let sessionConfiguration: URLSessionConfiguration
    private var currentSession: URLSession?
    /// The session invalidated for good, whose invalidation releases the blocks.
    private var retiredSession: ObjectIdentifier?
    private var states: [Int: (task: URLSessionTask, state: AFURLSessionTaskState)] = [:]
    private var policy = AFSecurityPolicy.default()
    private var serializer: AFHTTPResponseSerializer = AFJSONResponseSerializer()
    private var queue: DispatchQueue?
    private var group: DispatchGroup?
    let blocks = AFURLSessionManagerBlocks()

    /// A manager over a session with `configuration` (the default configuration when nil).
    public init(sessionConfiguration configuration: URLSessionConfiguration?) {
        sessionConfiguration = configuration ?? .default
        operationQueue = OperationQueue()
        operationQueue.maxConcurrentOperationCount = 1
        super.init()
    }

    public convenience override init() { self.init(sessionConfiguration: nil) }

    /// The session, made on first use (again after `invalidateSessionCancelingTasks(_:resetSession: true)`).
    open var session: URLSession {
        lock.withLock {
            if let currentSession { return currentSession }
            let session = URLSession(configuration: sessionConfiguration, delegate: self, delegateQueue: operationQueue)
            currentSession = session
            return session
        }
    }

    /// Turns responses into objects (default: ``AFJSONResponseSerializer``). Sesame types it as
    /// ``AFHTTPResponseSerializer`` (AFNetworking: any `AFURLResponseSerialization`), which every
    /// AFNetworking response serializer is.
    open var responseSerializer: AFHTTPResponseSerializer {
        get { lock.withLock { serializer } }
        set { lock.withLock { serializer = newValue } }
    }

    /// Decides server-trust challenges no block takes (default: ``AFSecurityPolicy/default()``).
    open var securityPolicy: AFSecurityPolicy {
        get { lock.withLock { policy } }
        set { lock.withLock { policy = newValue } }
    }

    /// Where completion handlers run (the main queue when nil).
    open var completionQueue: DispatchQueue? {
        get { lock.withLock { queue } }
        set { lock.withLock { queue = newValue } }
    }

    /// The group completion handlers run in (none when nil).
    open var completionGroup: DispatchGroup? {
        get { lock.withLock { group } }
        set { lock.withLock { group = newValue } }
    }

    /// The tasks that have not completed.
    open var tasks: [URLSessionTask] {
        lock.withLock { states.values.map(\.task).sorted { $0.taskIdentifier < $1.taskIdentifier } }
    }
    /// The data tasks that have not completed (upload tasks excluded).
    open var dataTasks: [URLSessionDataTask] {
        tasks.compactMap { $0 as? URLSessionDataTask }.filter { !($0 is URLSessionUploadTask) }
    }
    /// The upload tasks that have not completed.
    open var uploadTasks: [URLSessionUploadTask] { tasks.compactMap { $0 as? URLSessionUploadTask } }
    /// The download tasks that have not completed.
    open var downloadTasks: [URLSessionDownloadTask] { tasks.compactMap { $0 as? URLSessionDownloadTask } }

    /// Invalidates the session, cancelling its tasks or letting them finish; with `resetSession`
    /// the next use makes a new session.
    ///
    /// Without `resetSession` the manager is done: once the session says it is invalid, the blocks
    /// set on the manager are released, so blocks that capture the manager (as AFNetworking code
    /// often does) do not keep it alive for ever.
    open func invalidateSessionCancelingTasks(_ cancelPendingTasks: Bool, resetSession: Bool) {
        let session = lock.withLock { () -> URLSession? in
            defer { if resetSession { currentSession = nil } }
            if !resetSession, let currentSession { retiredSession = ObjectIdentifier(currentSession) }
            return currentSession
        }
        guard let session else { return }
        if cancelPendingTasks { session.invalidateAndCancel() } else { session.finishTasksAndInvalidate() }
    }

    /// Invalidates the session, cancelling its tasks or letting them finish; the manager is done
    /// with it.
    open func invalidateSessionCancelingTasks(_ cancelPendingTasks: Bool) {
        invalidateSessionCancelingTasks(cancelPendingTasks, resetSession: false)
    }

    // MARK: - Tasks

    /// A data task for `request`, not resumed; its progress blocks are called as the body goes and
    /// comes, and `completionHandler` gets the response, the serialized object and the error.
    open func dataTask(
        with request: URLRequest,
        uploadProgress uploadProgressBlock: ((Progress) -> Void)?,
        downloadProgress downloadProgressBlock: ((Progress) -> Void)?,
        completionHandler: ((URLResponse, Any?, (any Error)?) -> Void)? = nil
    ) -> URLSessionDataTask {
        let task = session.dataTask(with: request)
        register(task, upload: uploadProgressBlock, download: downloadProgressBlock, completion: completionHandler)
        return task
    }

    /// AFNetworking 3's form, without progress blocks.
    open func dataTask(
        with request: URLRequest,
        completionHandler: ((URLResponse, Any?, (any Error)?) -> Void)?
    ) -> URLSessionDataTask {
        dataTask(with: request, uploadProgress: nil, downloadProgress: nil, completionHandler: completionHandler)
    }

    /// An upload task sending the file at `fileURL` as the body, not resumed.
    open func uploadTask(
        with request: URLRequest,
        fromFile fileURL: URL,
        progress uploadProgressBlock: ((Progress) -> Void)?,
        completionHandler: ((URLResponse, Any?, (any Error)?) -> Void)? = nil
    ) -> URLSessionUploadTask {
        let task = session.uploadTask(with: request, fromFile: fileURL)
        register(task, upload: uploadProgressBlock, download: nil, completion: completionHandler)
        return task
    }

    /// An upload task sending `bodyData` as the body, not resumed.
    open func uploadTask(
        with request: URLRequest,
        from bodyData: Data?,
        progress uploadProgressBlock: ((Progress) -> Void)?,
        completionHandler: ((URLResponse, Any?, (any Error)?) -> Void)? = nil
    ) -> URLSessionUploadTask {
        let task = session.uploadTask(with: request, from: bodyData ?? Data())
        register(task, upload: uploadProgressBlock, download: nil, completion: completionHandler)
        return task
    }

    /// An upload of the request's own body: a multipart form from
    /// ``AFHTTPRequestSerializer/multipartFormRequest(withMethod:urlString:parameters:constructingBodyWith:error:)``
    /// (streamed from disk), or its `httpBodyStream`.
    open func uploadTask(
        withStreamedRequest request: URLRequest,
        progress uploadProgressBlock: ((Progress) -> Void)?,
        completionHandler: ((URLResponse, Any?, (any Error)?) -> Void)? = nil
    ) -> URLSessionUploadTask {
        let task = session.uploadTask(withStreamedRequest: request)
        register(task, upload: uploadProgressBlock, download: nil, completion: completionHandler)
        return task
    }

    /// A download: the file is moved to the URL `destination` returns (replacing nothing: an
    /// existing file there fails the task), and the completion gets that URL.
    open func downloadTask(
        with request: URLRequest,
        progress downloadProgressBlock: ((Progress) -> Void)?,
        destination: ((URL, URLResponse) -> URL)?,
        completionHandler: ((URLResponse, URL?, (any Error)?) -> Void)? = nil
    ) -> URLSessionDownloadTask {
        let task = session.downloadTask(with: request)
        let state = register(task, upload: nil, download: downloadProgressBlock, completion: nil)
        state.destination = destination
        state.downloadCompletionHandler = completionHandler
        return task
    }

    /// The upload progress of a task this manager made.
    open func uploadProgress(for task: URLSessionTask) -> Progress? { state(for: task)?.uploadProgress }

    /// The download progress of a task this manager made.
    open func downloadProgress(for task: URLSessionTask) -> Progress? { state(for: task)?.downloadProgress }

    @discardableResult
    private func register(
        _ task: URLSessionTask,
        upload: ((Progress) -> Void)?,
        download: ((Progress) -> Void)?,
        completion: ((URLResponse, Any?, (any Error)?) -> Void)?
    ) -> AFURLSessionTaskState {
        let state = AFURLSessionTaskState()
        state.uploadProgressBlock = upload
        state.downloadProgressBlock = download
        state.completionHandler = completion
        lock.withLock { states[task.taskIdentifier] = (task, state) }
        return state
    }

    func state(for task: URLSessionTask) -> AFURLSessionTaskState? {
        lock.withLock { states[task.taskIdentifier]?.state }
    }

    /// Whether `session` is the one the manager was invalidated with, for good.
    func isRetired(_ session: URLSession) -> Bool { lock.withLock { retiredSession == ObjectIdentifier(session) } }

    func removeState(for task: URLSessionTask) -> AFURLSessionTaskState? {
        lock.withLock { states.removeValue(forKey: task.taskIdentifier)?.state }
    }

    // MARK: - Delegate methods (AFURLSessionManager+Delegate.swift has what they do)

    /// The session became invalid: the session-invalid block is called and
    /// ``AFURLSessionDidInvalidateNotification`` posted.
    open func urlSession(_ session: URLSession, didBecomeInvalidWithError error: (any Error)?) {
        afURLSession(session, didBecomeInvalidWithError: error)
    }

    open func urlSession(
        _ session: URLSession,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) { afURLSession(session, didReceive: challenge, completionHandler: completionHandler) }

    open func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) { afURLSession(session, task: task, didReceive: challenge, completionHandler: completionHandler) }

    open func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        willPerformHTTPRedirection response: HTTPURLResponse,
        newRequest request: URLRequest,
        completionHandler: @escaping (URLRequest?) -> Void
    ) {
        afURLSession(
            session,
            task: task,
            willPerformHTTPRedirection: response,
            newRequest: request,
            completionHandler: completionHandler
        )
    }

    /// Reports upload progress to the task's progress block and the manager's block.
    open func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didSendBodyData bytesSent: Int64,
        totalBytesSent: Int64,
        totalBytesExpectedToSend: Int64
    ) {
        afURLSession(
            session,
            task: task,
            didSendBodyData: bytesSent,
            totalBytesSent: totalBytesSent,
            totalBytesExpectedToSend: totalBytesExpectedToSend
        )
    }

    /// Completes the task: serializes the response and calls its completion handler on the
    /// completion queue.
    open func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        afURLSession(session, task: task, didCompleteWithError: error)
    }

    /// Passes the response head to the response block, or allows it.
    open func urlSession(
        _ session: URLSession,
        dataTask: URLSessionDataTask,
        didReceive response: URLResponse,
        completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
    ) { afURLSession(session, dataTask: dataTask, didReceive: response, completionHandler: completionHandler) }

    /// Collects the body and reports download progress.
    open func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        afURLSession(session, dataTask: dataTask, didReceive: data)
    }

    /// Reports download progress to the task's progress block and the manager's block.
    open func urlSession(
        _ session: URLSession,
        downloadTask: URLSessionDownloadTask,
        didWriteData bytesWritten: Int64,
        totalBytesWritten: Int64,
        totalBytesExpectedToWrite: Int64
    ) {
        afURLSession(
            session,
            downloadTask: downloadTask,
            didWriteData: bytesWritten,
            totalBytesWritten: totalBytesWritten,
            totalBytesExpectedToWrite: totalBytesExpectedToWrite
        )
    }

    open func urlSession(
        _ session: URLSession,
        downloadTask: URLSessionDownloadTask,
        didFinishDownloadingTo location: URL
    ) { afURLSession(session, downloadTask: downloadTask, didFinishDownloadingTo: location) }

    open override var description: String {
        "<\(type(of: self)) session: \(lock.withLock { currentSession }.map { "\($0)" } ?? "(not made)"), tasks: \(lock.withLock { states.count })>"
    }
}
