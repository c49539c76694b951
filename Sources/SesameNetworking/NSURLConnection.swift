import Foundation
import Sesame

/// Objective-C's autoreleasing out-parameter is a plain pointer without Objective-C.
public typealias AutoreleasingUnsafeMutablePointer<Pointee> = UnsafeMutablePointer<Pointee>

/// An `NSError` out-parameter, as Apple's Foundation declares it (Linux's has none).
public typealias NSErrorPointer = AutoreleasingUnsafeMutablePointer<NSError?>?

/// NSURLConnection's delegate (`NSURLConnectionDelegate`): failures and challenges.
public protocol NSURLConnectionDelegate: NSObjectProtocol {
    /// The load failed with `error`; no other callback follows.
    func connection(_ connection: NSURLConnection, didFailWithError error: any Error)
    /// Whether the shared credential storage is consulted and updated (true when the delegate does
    /// not implement this method).
    func connectionShouldUseCredentialStorage(_ connection: NSURLConnection) -> Bool
    /// Answer only through `challenge.sender` (seed 001): `use`, `continueWithoutCredential` (the
    /// 401 goes to `connection(_:didReceive:)` as the response), `cancel` (the connection fails
    /// with `NSURLErrorUserCancelledAuthentication`), `performDefaultHandling`,
    /// `rejectProtectionSpaceAndContinue`.
    func connection(_ connection: NSURLConnection, willSendRequestFor challenge: URLAuthenticationChallenge)
    /// The legacy pair, used when `willSendRequestFor` is missing.
    func connection(
        _ connection: NSURLConnection,
        canAuthenticateAgainstProtectionSpace protectionSpace: URLProtectionSpace
    ) -> Bool
    /// A challenge, in the legacy pair (after `canAuthenticateAgainstProtectionSpace` said true):
    /// answer through `challenge.sender`.
    func connection(_ connection: NSURLConnection, didReceive challenge: URLAuthenticationChallenge)
}

extension NSURLConnectionDelegate {
    /// Does nothing.
    public func connection(_ connection: NSURLConnection, didFailWithError error: any Error) {}
    /// True: the shared credential storage is used.
    public func connectionShouldUseCredentialStorage(_ connection: NSURLConnection) -> Bool { true }
    public func connection(_ connection: NSURLConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
        challenge.markMissing(.handler)
    }
    public func connection(
        _ connection: NSURLConnection,
        canAuthenticateAgainstProtectionSpace protectionSpace: URLProtectionSpace
    ) -> Bool {
        // Apple's default: password schemes yes, server trust and client certificates no.
        ![NSURLAuthenticationMethodServerTrust, NSURLAuthenticationMethodClientCertificate]
            .contains(protectionSpace.authenticationMethod)
    }
    /// Not implemented by the delegate: the challenge gets default handling.
    public func connection(_ connection: NSURLConnection, didReceive challenge: URLAuthenticationChallenge) {
        challenge.markMissing(.async)
    }
}

/// NSURLConnection's data callbacks (`NSURLConnectionDataDelegate`).
public protocol NSURLConnectionDataDelegate: NSURLConnectionDelegate {
    /// A redirect (or, with `response` nil, the first request): return the request to send, or nil
    /// to stop and receive the redirect response.
    func connection(
        _ connection: NSURLConnection,
        willSend request: URLRequest,
        redirectResponse response: URLResponse?
    )
        -> URLRequest?
    /// The response head arrived; a redirect followed is not reported here.
    func connection(_ connection: NSURLConnection, didReceive response: URLResponse)
    /// A piece of the body arrived.
    func connection(_ connection: NSURLConnection, didReceive data: Data)
    /// The load finished; no other callback follows.
    func connectionDidFinishLoading(_ connection: NSURLConnection)
}

extension NSURLConnectionDataDelegate {
    /// Follows the redirect as given.
    public func connection(
        _ connection: NSURLConnection,
        willSend request: URLRequest,
        redirectResponse response: URLResponse?
    ) -> URLRequest? { request }
    /// Does nothing.
    public func connection(_ connection: NSURLConnection, didReceive response: URLResponse) {}
    /// Does nothing.
    public func connection(_ connection: NSURLConnection, didReceive data: Data) {}
    /// Does nothing.
    public func connectionDidFinishLoading(_ connection: NSURLConnection) {}
}

/// A URL load in NSURLConnection's shape (seeds 001 and 003): delegate callbacks on the run loop
/// the connection is scheduled in (the creating thread's, by default) or on a delegate queue.
/// The connection keeps its delegate until it finishes, as Apple's does.
open class NSURLConnection: NSObject, @unchecked Sendable {
    // @unchecked: mutable state is behind `lock`; the delegate is used on the connection's loop.
    /// The request the connection was made with.
    public let originalRequest: URLRequest
    private let lock = NSLock()
    private var current: URLRequest
    private var delegateObject: (any NSURLConnectionDelegate)?
    private var scheduler: Scheduler
    private var started = false
    private var task: SessionTask?
    /// Wakes the scheduled run loop for each delivery (a block performed on a run loop waits for
    /// the loop's next event otherwise); invalidated when the connection ends.
    private var waker: UncheckedBox<Timer>?
    /// Set when the delegate cancelled a challenge through the sender (reported as -1012).
    private var cancelledAuthentication = false

    /// The process-wide engine every connection runs on, with Apple's behaviour (Basic may go over
    /// plain http) and the shared credential and cookie storages.
    static let engine = Session(configuration: URLSessionConfiguration.default.sesameConfiguration())

    /// A connection for `request` that starts at once, reporting to `delegate`; nil when the
    /// request cannot be loaded (no URL, an unsupported scheme).
    public convenience init?(request: URLRequest, delegate: Any?) {
        self.init(request: request, delegate: delegate, startImmediately: true)
    }

    /// A connection for `request` reporting to `delegate`, started now or by ``start()``; nil when
    /// the request cannot be loaded.
    public init?(request: URLRequest, delegate: Any?, startImmediately: Bool) {
        guard (try? request.sesameRequest()) != nil else { return nil }
        originalRequest = request
        current = request
        delegateObject = delegate as? any NSURLConnectionDelegate
        scheduler = .runLoop(RunLoop.current, [.default])
        super.init()
        if startImmediately { start() }
    }

    /// `connectionWithRequest:delegate:`.
    open class func connection(with request: URLRequest, delegate: Any?) -> NSURLConnection? {
        NSURLConnection(request: request, delegate: delegate)
    }

    /// The request being loaded: the original, or the last redirect's.
    open var currentRequest: URLRequest { lock.withLock { current } }

    /// Delivers callbacks on `runLoop` in `mode` instead (before `start`).
    open func schedule(in runLoop: RunLoop, forMode mode: RunLoop.Mode) {
        lock.withLock { scheduler = .runLoop(runLoop, [mode]) }
    }

    /// Does nothing: the connection keeps the run loop it was scheduled in.
    open func unschedule(from runLoop: RunLoop, forMode mode: RunLoop.Mode) {}

    /// Delivers callbacks on `queue` instead of a run loop (before `start`).
    open func setDelegateQueue(_ queue: OperationQueue?) {
        guard let queue else { return }
        lock.withLock { scheduler = .queue(queue) }
    }

    /// Starts the load, if it has not started (calling it again does nothing).
    open func start() {
        let request: HTTPRequest
        do {
            guard
                lock.withLock({ () -> Bool in
                    defer { started = true }
                    return !started
                })
            else { return }
            request = try originalRequest.sesameRequest()
        } catch {
            return fail(URLError.from(error, url: originalRequest.url))
        }
        let bridge = ConnectionBridge(self)
        let task = Self.engine.dataTask(with: request, delegate: bridge)
        lock.withLock { self.task = task }
        task.resume()
    }

    /// Stops the load; the delegate gets no more calls.
    open func cancel() {
        let task = lock.withLock { () -> SessionTask? in
            delegateObject = nil
            return self.task
        }
        task?.cancel()
    }

    // MARK: - Class methods

    /// Loads `request` and calls `handler` on `queue` with the response, data and error.
    @preconcurrency
    open class func sendAsynchronousRequest(
        _ request: URLRequest,
        queue: OperationQueue,
        completionHandler handler: @escaping @Sendable (URLResponse?, Data?, (any Error)?) -> Void
    ) {
        Task {
            do {
                let (data, response) = try await engine.data(for: try request.sesameRequest())
                let apple = HTTPURLResponse.make(response)
                queue.addOperation { handler(apple, data, nil) }
            } catch {
                let failure = URLError.from(error, url: request.url)
                queue.addOperation { handler(nil, nil, failure) }
            }
        }
    }

    /// Loads `request`, blocking the calling thread (Apple deprecated this; never call it on a
    /// Swift concurrency thread, which it would hold for the whole load).
    open class func sendSynchronousRequest(
        _ request: URLRequest,
        returning response: UnsafeMutablePointer<URLResponse?>?
    ) throws -> Data {
        let box = ResultBox<(Data, URLResponse)>()
        let done = DispatchSemaphore(value: 0)
        sendAsynchronousRequest(request, queue: OperationQueue()) { response, data, error in
            if let response, let data {
                box.set(.success((data, response)))
            } else {
                box.set(.failure(error ?? URLError(.unknown)))
            }
            done.signal()
        }
        done.wait()
        let (data, received) = try box.take()
        response?.pointee = received
        return data
    }

    // MARK: - Internal

    enum Scheduler {
        case runLoop(RunLoop, [RunLoop.Mode])
        case queue(OperationQueue)
    }

    var delegate: (any NSURLConnectionDelegate)? { lock.withLock { delegateObject } }

    /// Runs `body` where the delegate's callbacks go, and waits for it.
    func deliver<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        let scheduler = lock.withLock { self.scheduler }
        return await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            let call = UncheckedBox(body)
            switch scheduler {
            case .queue(let queue):
                queue.addOperation { continuation.resume(returning: call.value()) }
            case .runLoop(let loop, let modes):
                loop.perform(inModes: modes) { continuation.resume(returning: call.value()) }
                wakeUp(loop, modes)
            }
        }
    }

    /// Sets the waker's fire date to now, adding it to the loop the first time.
    private func wakeUp(_ loop: RunLoop, _ modes: [RunLoop.Mode]) {
        let timer = lock.withLock { () -> UncheckedBox<Timer> in
            if let waker { return waker }
            let made = UncheckedBox(Timer(timeInterval: 1_000_000, repeats: true) { _ in })
            for mode in modes { loop.add(made.value, forMode: mode) }
            waker = made
            return made
        }
        timer.value.fireDate = Date()
    }

    func update(request: URLRequest) { lock.withLock { current = request } }
    func noteAuthenticationCancelled() { lock.withLock { cancelledAuthentication = true } }

    /// Ends the connection: `didFailWithError` for an error, else `connectionDidFinishLoading`.
    func finish(_ error: (any Error)?) async {
        let (delegate, cancelledByUser) = lock.withLock { () -> ((any NSURLConnectionDelegate)?, Bool) in
            defer { delegateObject = nil }
            return (delegateObject, cancelledAuthentication)
        }
        guard let delegate else { return }
        let call = UncheckedBox(delegate)
        let failure: (any Error)? = error.map { error in
            cancelledByUser
                ? URLError(
                    .userCancelledAuthentication,
                    userInfo: [NSURLErrorFailingURLErrorKey: originalRequest.url as Any]
                )
                : URLError.from(error, url: originalRequest.url)
        }
        await deliver { [self] in
            if let failure {
                call.value.connection(self, didFailWithError: failure)
            } else {
                (call.value as? any NSURLConnectionDataDelegate)?.connectionDidFinishLoading(self)
            }
        }
        lock.withLock { waker }?.value.invalidate()
    }

    private func fail(_ error: any Error) {
        Task { await finish(error) }
    }
}

extension ResultBox {
    /// The result, once set (the synchronous form reads it after its semaphore).
    func take() throws -> T {
        guard let result = peek() else { throw URLError(.unknown) }
        return try result.get()
    }
}
