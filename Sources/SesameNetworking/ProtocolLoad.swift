import Foundation
import Sesame

/// One task loaded by a ``URLProtocol`` instead of the network: the protocol's reports (the
/// ``URLProtocolClient`` calls) become the task's callbacks, in the order they were made, as the
/// network's would.
///
/// The client methods only queue what they are told, so a protocol may call them from any thread,
/// inside `startLoading` or later; one Swift task takes the reports in order and awaits the
/// delegates on the session's queue.
final class ProtocolLoad: NSObject, URLProtocolClient, @unchecked Sendable {
    // @unchecked: `loader` is behind `lock`; the rest is set once.
    private enum Report {
        case response(URLResponse)
        case data(Data)
        case finished
        case failed(any Error)
        case redirected(URLRequest, URLResponse)
        case challenge(URLAuthenticationChallenge)
        case cancelled
    }

    /// Redirects a protocol may report for one task before it fails (as the network's limit).
    static let maximumRedirects = 16

    let session: URLSession
    let task: URLSessionTask
    private let reports: AsyncStream<Report>
    private let reporter: AsyncStream<Report>.Continuation
    private let lock = NSLock()
    private var loader: URLProtocol?

    private init(session: URLSession, task: URLSessionTask) {
        self.session = session
        self.task = task
        (reports, reporter) = AsyncStream.makeStream(of: Report.self)
    }

    /// The class that loads `request` for `task`: the configuration's classes in order, and for
    /// the shared session first the registered ones (Apple's rule); nil: the network loads it.
    static func protocolClass(for task: URLSessionTask, in session: URLSession) -> URLProtocol.Type? {
        let configured = (session.configuration.protocolClasses ?? []).compactMap { $0 as? URLProtocol.Type }
        let candidates = (session.isShared ? URLProtocol.registeredClasses : []) + configured
        return candidates.first { $0.canInit(with: task) }
    }

    /// Starts `task` through `type`.
    static func start(_ type: URLProtocol.Type, task: URLSessionTask, session: URLSession) {
        let load = ProtocolLoad(session: session, task: task)
        task.attach(Task { await load.run(type) }, onCancel: { load.reporter.yield(.cancelled) })
    }

    // MARK: - URLProtocolClient

    func urlProtocol(_ protocol: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse) {
        reporter.yield(.redirected(request, redirectResponse))
    }

    func urlProtocol(_ protocol: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse) {
        reporter.yield(.response(cachedResponse.response))
        reporter.yield(.data(cachedResponse.data))
        reporter.yield(.finished)
    }

    func urlProtocol(
        _ protocol: URLProtocol,
        didReceive response: URLResponse,
        cacheStoragePolicy policy: URLCache.StoragePolicy
    ) {
        reporter.yield(.response(response))
    }

    func urlProtocol(_ protocol: URLProtocol, didLoad data: Data) { reporter.yield(.data(data)) }

    func urlProtocolDidFinishLoading(_ protocol: URLProtocol) { reporter.yield(.finished) }

    func urlProtocol(_ protocol: URLProtocol, didFailWithError error: any Error) { reporter.yield(.failed(error)) }

    func urlProtocol(_ protocol: URLProtocol, didReceive challenge: URLAuthenticationChallenge) {
        reporter.yield(.challenge(challenge))
    }

    func urlProtocol(_ protocol: URLProtocol, didCancel challenge: URLAuthenticationChallenge) {}

    // MARK: - Running

    private func begin(_ type: URLProtocol.Type) {
        let loader = type.init(task: task, cachedResponse: nil, client: self)
        lock.withLock { self.loader = loader }
        loader.startLoading()
    }

    /// Stops the protocol loading now (cancelled, redirected, or done).
    private func stop() {
        let loader = lock.withLock { () -> URLProtocol? in
            defer { self.loader = nil }
            return self.loader
        }
        loader?.stopLoading()
    }

    private func run(_ type: URLProtocol.Type) async {
        begin(type)
        var redirects = 0
        for await report in reports {
            switch report {
            case .cancelled:
                return finish(URLError.from(SesameError.cancelledTask, url: task.currentRequest?.url))
            case .response(let response):
                task.update(response: response)
                if await responseDisposition(response) == .cancel {
                    return finish(URLError.from(SesameError.cancelledTask, url: task.currentRequest?.url))
                }
            case .data(let data):
                await deliver(data)
            case .finished:
                return finish(nil)
            case .failed(let error):
                return finish(error)
            case .redirected(let request, let response):
                guard let next = await redirection(to: request, from: response) else {
                    // Refused: the redirect response is the task's, and the protocol goes on.
                    task.update(response: response)
                    continue
                }
                redirects += 1
                guard redirects <= Self.maximumRedirects else {
                    return finish(URLError(.httpTooManyRedirects, userInfo: failingURL))
                }
                stop()
                task.update(request: next)
                guard let nextType = Self.protocolClass(for: task, in: session) else {
                    // Where no protocol answers, the network loads the redirected request.
                    reporter.finish()
                    return TaskRunner(session: session, task: task).start(request: next)
                }
                begin(nextType)
            case .challenge(let challenge):
                await answer(challenge)
            }
        }
    }

    private var failingURL: [String: Any] {
        [NSURLErrorFailingURLErrorKey: task.currentRequest?.url as Any]
    }

    private func finish(_ error: (any Error)?) {
        stop()
        reporter.finish()
        session.finish(task, error: error)
    }

    private func responseDisposition(_ response: URLResponse) async -> URLSession.ResponseDisposition {
        let session = self.session
        guard let dataTask = task as? URLSessionDataTask else { return .allow }
        let delegates = session.progressDelegates(for: task, as: (any URLSessionDataDelegate).self)
        guard !delegates.isEmpty else { return .allow }
        let call = UncheckedBox(delegates)
        return await session.onQueue(answering: { answer in
            let answered = DelegateDispatch.first(call.value) {
                $0.urlSession(session, dataTask: dataTask, didReceive: response) { answer($0) }
            }
            if !answered { answer(.allow) }
        })
    }

    private func deliver(_ data: Data) async {
        let session = self.session
        task.add(received: data.count)
        if task.completion != nil || task.callsTaskDelegateForAsyncForm { task.gather(data) }
        guard let dataTask = task as? URLSessionDataTask else { return }
        let delegates = session.progressDelegates(for: task, as: (any URLSessionDataDelegate).self)
        guard !delegates.isEmpty else { return }
        let call = UncheckedBox(delegates)
        await session.onQueue {
            DelegateDispatch.first(call.value) { $0.urlSession(session, dataTask: dataTask, didReceive: data) }
        }
    }

    /// The request to follow (the delegates' decision; the proposed one when none decides).
    private func redirection(to request: URLRequest, from response: URLResponse) async -> URLRequest? {
        let (session, task) = (self.session, self.task)
        let delegates = session.delegates(for: task, as: (any URLSessionTaskDelegate).self)
        guard !delegates.isEmpty, let http = response as? HTTPURLResponse else { return request }
        let call = UncheckedBox(delegates)
        return await session.onQueue(answering: { answer in
            let answered = DelegateDispatch.first(call.value) {
                $0.urlSession(session, task: task, willPerformHTTPRedirection: http, newRequest: request) { answer($0) }
            }
            if !answered { answer(request) }
        })
    }

    /// Asks the delegates (task level, then session level, each in either form) and answers
    /// through the challenge's sender; with no delegate method, default handling.
    private func answer(_ challenge: URLAuthenticationChallenge) async {
        let (session, task) = (self.session, self.task)
        var answer: Answer?
        for delegate in session.delegates(for: task, as: (any URLSessionTaskDelegate).self) where answer == nil {
            let call = UncheckedBox(delegate)
            answer = await ask(
                challenge,
                handler: { reply in
                    call.value.urlSession(session, task: task, didReceive: challenge) { reply(Answer($0, $1)) }
                },
                async: { Answer(await delegate.urlSession(session, task: task, didReceive: challenge)) }
            )
        }
        if answer == nil, let delegate = session.delegate {
            let call = UncheckedBox(delegate)
            answer = await ask(
                challenge,
                handler: { reply in call.value.urlSession(session, didReceive: challenge) { reply(Answer($0, $1)) } },
                async: { Answer(await delegate.urlSession(session, didReceive: challenge)) }
            )
        }
        guard let sender = challenge.sender else { return }
        switch answer?.disposition ?? .performDefaultHandling {
        case .useCredential:
            if let credential = answer?.credential {
                sender.use(credential, for: challenge)
            } else {
                sender.continueWithoutCredential(for: challenge)
            }
        case .performDefaultHandling: sender.performDefaultHandling(for: challenge)
        case .cancelAuthenticationChallenge: sender.cancel(challenge)
        case .rejectProtectionSpace: sender.rejectProtectionSpaceAndContinue(with: challenge)
        }
    }

    /// One challenge method of one delegate: its completion-handler form on the delegate queue,
    /// else its `async` form; nil when the delegate implements neither (Sesame's defaults mark
    /// the forms they stand in for).
    private func ask(
        _ challenge: URLAuthenticationChallenge,
        handler: @escaping @Sendable (@escaping @Sendable (Answer) -> Void) -> Void,
        async asynchronous: () async -> Answer
    ) async -> Answer? {
        challenge.clearMissing()
        let given: Answer = await session.onQueue(answering: handler)
        if !challenge.isMissing(.handler) { return given }
        let later = await asynchronous()
        return challenge.isMissing(.async) ? nil : later
    }
}
