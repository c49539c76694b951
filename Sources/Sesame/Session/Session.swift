import FoundationEssentials
import Glibc

/// Makes HTTP requests (the `URLSession` analogue) over Sesame's own transport: keep-alive
/// connection reuse, redirects, decoding, timeouts, cancellation, and the TLS decisions of
/// ``SessionConfiguration/handshakeHooks``.
///
/// ```swift
/// let (data, response) = try await Session.shared.data(from: URL(string: "https://example.test/")!)
/// ```
public final class Session: Sendable {
    /// The configuration the session was made with (a copy; later changes do not apply).
    public let configuration: SessionConfiguration
    /// The session's delegate, asked after a task's own delegate.
    public let delegate: (any SessionTaskDelegate)?
    let loop: EventLoop

    /// The event loop that owns the session's connections. Each request is driven on it (the
    /// caller's task suspends meanwhile, holding no thread); no thread but the loop's ever waits
    /// for a socket. A caller whose own request loop runs on the event loop too
    /// (`withTaskExecutorPreference(session.eventLoop) { … }`) saves the hop there and back per
    /// request; code run there must not block, since every connection of the loop waits for it.
    public var eventLoop: EventLoop { loop }
    /// The session's connections over both protocols, and what it learned of each origin's protocol.
    let pool: ConnectionPool
    /// The configuration's proxies, parsed once.
    let proxyRouter: ProxyRouter
    /// What each exchange needs of the configuration.
    let exchangeSettings: ExchangeSettings
    /// The last requested URL's origin and request target (see `URLPartsCache`).
    let urlParts = URLPartsCache()
    let preemptive = PreemptiveAuthentication()
    /// The hooks of a handshake no delegate is asked about (the configuration's, or its default
    /// handling); see `handshakeHooks(for:)`.
    let delegatelessHooks: TLSHandshakeHooks
    /// What every task's state machine needs of the configuration.
    let taskSettings: TaskStateMachine.Settings
    /// The session, weakly, for closures made for it (the pool's connector, handshake hooks).
    let reference: SessionReference
    /// Proxy credentials that worked, sent with later requests through the same proxy.
    let proxyAuthorizations = LockedValue<[ProxyEndpoint: ChallengeResolver.Attempt]>([:])
    /// Client identities chosen per protection space: the first answer holds for the session.
    let chosenIdentities = LockedValue<[ProtectionSpace: Identity?]>([:])
    /// The Bearer token of ``SessionConfiguration/bearerAuthentication``, if any.
    let tokenSource: TokenSource?

    /// A session with the default configuration and no delegate.
    public static let shared = Session()

    /// - Parameters:
    ///   - configuration: timeouts, limits, headers, TLS settings.
    ///   - delegate: asked about redirects, responses, data and completion.
    ///   - eventLoop: the loop that owns the session's connections.
    public init(
        configuration: SessionConfiguration = .default,
        delegate: (any SessionTaskDelegate)? = nil,
        eventLoop: EventLoop = .shared
    ) {
        self.configuration = configuration
        self.delegate = delegate
        self.loop = eventLoop
        self.proxyRouter = ProxyRouter(configuration.proxy)
        self.exchangeSettings = ExchangeSettings(configuration)
        // TLS decisions become challenges for a delegate (`handshakeHooks(for:)`), unless the
        // configuration decides them itself through explicit hooks. With no delegate to ask:
        let reference = SessionReference()
        self.reference = reference
        var hooks = configuration.handshakeHooks
        if hooks.clientCertificate == nil, !configuration.clientIdentities.isEmpty {
            hooks.clientCertificate = { request in
                guard let session = reference.session else { return nil }
                return try await session.chooseIdentity(request)
            }
        }
        if hooks.serverTrust == nil, configuration.securityPolicy != nil || configuration.serverTrustManager != nil {
            hooks.serverTrust = { [configuration] trust in try Self.defaultTrustDecision(trust, configuration) }
        }
        self.delegatelessHooks = hooks
        self.taskSettings = TaskStateMachine.Settings(configuration)
        tokenSource = configuration.bearerAuthentication.map { bearer in
            TokenSource(bearer) { [observer = configuration.eventObserver] event in observer?(event) }
        }
        pool = ConnectionPool(
            limit: configuration.maximumConnectionsPerHost,
            idleTimeout: configuration.idleTimeout,
            idlePingThreshold: configuration.http2IdlePingThreshold,
            pingTimeout: min(configuration.connectTimeout, .seconds(5)),
            loop: eventLoop
        )
        reference.set(self)
    }

    // MARK: - Async

    /// Sends `request` and returns the whole (decoded) body with the final response.
    /// - Throws: ``SesameError`` (``SesameError/Code/cancelled`` when the calling task is cancelled).
    public func data(
        for request: HTTPRequest,
        delegate: (any SessionTaskDelegate)? = nil
    ) async throws -> (Data, HTTPResponse) {
        let task = SessionTask(request: request, delegate: delegate)
        task.markRunning()
        var data = Data()
        let response = try await run(
            task,
            // Room for the whole body at once (not grown by copying), up to a bound a server's
            // claim alone cannot push past.
            expecting: { length in data.reserveCapacity(min(length, Self.largestReservation)) },
            sink: { chunk in data.append(contentsOf: chunk) }
        )
        return (data, response)
    }

    /// The most memory a body's announced length reserves before its bytes arrive.
    static let largestReservation = 16 << 20

    /// GETs `url`.
    public func data(from url: URL, delegate: (any SessionTaskDelegate)? = nil) async throws -> (Data, HTTPResponse) {
        try await data(for: HTTPRequest(url: url), delegate: delegate)
    }

    /// Sends `request` with `body` as its body.
    public func upload(
        for request: HTTPRequest,
        from body: Data,
        delegate: (any SessionTaskDelegate)? = nil
    ) async throws -> (Data, HTTPResponse) {
        var request = request
        request.body = .data(body)
        return try await data(for: request, delegate: delegate)
    }

    /// Sends `request` with the file at `fileURL` as its body, streamed from disk.
    public func upload(
        for request: HTTPRequest,
        fromFile fileURL: URL,
        delegate: (any SessionTaskDelegate)? = nil
    ) async throws -> (Data, HTTPResponse) {
        guard FileManager.default.isReadableFile(atPath: fileURL.path) else {
            throw SesameError(.fileUnreadable, "'\(fileURL.path)': not a readable file")
        }
        var request = request
        request.body = .file(fileURL)
        return try await data(for: request, delegate: delegate)
    }

    /// Downloads the body of `request` into `destination`. A regular file (or a new one) appears
    /// only when the download completed: it is written beside `destination`, then renamed over it.
    /// Anything else there (a symbolic link, a device such as `/dev/null`, a FIFO) is opened and
    /// written through instead, never replaced.
    /// - Parameters:
    ///   - request: the request to send.
    ///   - destination: the file to create (replaced if it is a regular file).
    ///   - delegate: asked before the session's delegate.
    ///   - progress: called with (bytes received, expected total) as the body arrives, in the
    ///     calling task: it should return quickly.
    public func download(
        for request: HTTPRequest,
        to destination: URL,
        delegate: (any SessionTaskDelegate)? = nil,
        progress: (@Sendable (Int64, Int64?) -> Void)? = nil
    ) async throws -> HTTPResponse {
        var status = stat()
        let replaces =
            lstat(destination.path, &status) == 0 ? status.st_mode & S_IFMT == S_IFREG : errno == ENOENT
        let directory = destination.deletingLastPathComponent()
        let written =
            replaces
            ? directory.appendingPathComponent(".\(destination.lastPathComponent).sesame-\(UUID().uuidString)")
            : destination
        let flags = O_WRONLY | O_CREAT | O_CLOEXEC | (replaces ? O_EXCL | O_NOFOLLOW : O_TRUNC)
        let fd = open(written.path, flags, 0o666)
        guard fd >= 0 else {
            throw SesameError(.fileUnreadable, "cannot write '\(written.path)': \(errnoText())")
        }
        let handle = WritableFile(descriptor: fd, path: written.path)
        let task = SessionTask(request: request, delegate: delegate)
        task.markRunning()
        do {
            var received: Int64 = 0
            let response = try await run(task) { chunk in
                // A file write may block, and `progress` is the caller's code: neither on the loop.
                try await offLoop {
                    Result {
                        try handle.write(chunk)
                        received += Int64(chunk.count)
                        progress?(received, task.response?.expectedContentLength.map(Int64.init))
                    }
                }.get()
            }
            guard replaces else {
                handle.close()
                return response
            }
            try handle.synchronize()
            handle.close()
            // rename(2) replaces an existing file atomically: the destination is never half written.
            guard rename(written.path, destination.path) == 0 else {
                throw SesameError(.fileUnreadable, "cannot move the download to '\(destination.path)': \(errnoText())")
            }
            return response
        } catch {
            handle.close()
            if replaces { unlink(written.path) }
            throw error
        }
    }

    // MARK: - Tasks with a completion handler or delegate callbacks

    /// A task that calls `completionHandler` once (on the Swift concurrency pool) with the body and
    /// response, or the error. Call ``SessionTask/resume()`` to start it.
    public func dataTask(
        with request: HTTPRequest,
        completionHandler: @escaping @Sendable (Data?, HTTPResponse?, (any Error)?) -> Void
    ) -> SessionTask {
        let task = SessionTask(request: request, delegate: nil)
        task.prepare { [self] in
            task.attach(
                Task {
                    do {
                        var data = Data()
                        let response = try await run(task) { data.append(contentsOf: $0) }
                        completionHandler(data, response, nil)
                    } catch {
                        completionHandler(nil, task.response, error)
                    }
                }
            )
        }
        return task
    }

    /// A task whose response, data and completion go to the delegates. Call
    /// ``SessionTask/resume()`` to start it.
    public func dataTask(with request: HTTPRequest, delegate: (any SessionTaskDelegate)? = nil) -> SessionTask {
        let task = SessionTask(request: request, delegate: delegate)
        task.prepare { [self] in
            task.attach(
                Task {
                    let first = task.delegate ?? self.delegate
                    do {
                        _ = try await run(task, notifyingDelegates: true) { chunk in
                            await offLoop { await first?.session(self, task: task, didReceive: Data(chunk)) }
                        }
                        await first?.session(self, task: task, didCompleteWithError: nil)
                    } catch {
                        await first?.session(self, task: task, didCompleteWithError: error)
                    }
                }
            )
        }
        return task
    }

    /// Closes idle connections. Tasks already running finish.
    public func closeIdleConnections() {
        pool.closeIdleConnections()
    }

    // MARK: - Delegates

    /// The delegate after `current` for `task`: the session's after the task's, then none.
    func nextDelegate(after current: any SessionTaskDelegate, for task: SessionTask) -> (any SessionTaskDelegate)? {
        if let taskDelegate = task.delegate, taskDelegate === current, delegate !== current { return delegate }
        return nil
    }
}
