import FoundationEssentials
import Glibc

extension Session {
    /// Opens a connection for a pool key: straight to the origin, to a forwarding proxy, or
    /// through a `CONNECT` tunnel with TLS to the origin inside it.
    func openConnection(
        _ origin: Origin,
        for task: SessionTask?,
        deadline: ContinuousClock.Instant? = nil,
        offersHTTP2: Bool = false
    ) async throws -> Connection {
        let connectTimeout = connectLimit(by: deadline)
        let peer: (host: String, port: Int, usesTLS: Bool)
        switch origin.route {
        case .direct:
            peer = (origin.host, origin.port, origin.isTLS)
        case .forward(let proxy):
            // TLS to an HTTPS proxy is trusted like any server: the proxy's name, the session's roots.
            peer = (proxy.host, proxy.port, proxy.isTLS)
        case .tunnel(let proxy):
            return try await openTunnel(
                to: origin,
                through: proxy,
                for: task,
                deadline: deadline,
                offersHTTP2: offersHTTP2
            )
        }
        return try await Connection.connect(
            host: peer.host,
            port: peer.port,
            tls: peer.usesTLS ? (origin.route == .direct ? originTLS(offersHTTP2: offersHTTP2) : proxyTLS) : nil,
            hooks: handshakeHooks(for: task),
            connectTimeout: connectTimeout,
            nameCacheLifetime: configuration.nameCacheLifetime,
            on: loop
        )
    }

    /// The time a new connection may take: the connect timeout, or what is left of the task's
    /// deadline when that is sooner (never less than a millisecond, so the limit is the one that ends it).
    func connectLimit(by deadline: ContinuousClock.Instant?) -> Duration {
        guard let deadline else { return configuration.connectTimeout }
        return max(.milliseconds(1), min(configuration.connectTimeout, loop.now.duration(to: deadline)))
    }

    /// `CONNECT` through `proxy`, answering its 407s through the same resolver, delegates and
    /// storage as a server's 401s (bounded by the failure limit), then TLS to the origin.
    private func openTunnel(
        to origin: Origin,
        through proxy: ProxyEndpoint,
        for task: SessionTask?,
        deadline: ContinuousClock.Instant?,
        offersHTTP2: Bool
    ) async throws
        -> Connection
    {
        // CONNECT's authority form always names the port (RFC 9110 9.3.6), also for an IPv6 host
        // on the scheme's default port.
        let name = origin.host.utf8.contains(UInt8(ascii: ":")) ? "[\(origin.host)]" : origin.host
        let authority = "\(name):\(origin.port)"
        guard let url = URL(string: "https://\(authority)/") else {
            throw SesameError(.invalidArgument, "'\(authority)' cannot be the target of a CONNECT request")
        }
        var request = HTTPRequest(url: url)
        request.method = "CONNECT"
        var hop = try connectHop(to: proxy, for: url, task: task)
        // A 407 after which the proxy keeps its connection lets the next CONNECT (NTLM's
        // AUTHENTICATE, say) go on the same one; otherwise each costs a new connection. The
        // resolver ends the loop long before this bound.
        var kept: Connection?
        for _ in 0..<(2 * configuration.maximumAuthenticationFailures + 8) {
            let wasKept = kept != nil
            let connection: Connection
            if let kept {
                connection = kept
            } else {
                connection = try await connectToProxy(proxy, for: task, deadline: deadline)
            }
            kept = nil
            let answer: (response: HTTPResponse, leftover: [UInt8], reusable: Bool)
            do {
                answer = try await ProxyTunnel.connect(
                    connection,
                    authority: authority,
                    proxy: proxy,
                    proxyAuthorization: try hop.authorization(for: request, uri: authority)?.0,
                    userAgent: configuration.defaultHeaders.first("User-Agent"),
                    timeout: deadline.map { min(configuration.requestTimeout, loop.now.duration(to: $0)) }
                        ?? configuration.requestTimeout,
                    observer: configuration.eventObserver
                )
            } catch let error as SesameError
                where wasKept && (error.code == .connectionClosed || error.code == .connectionReset)
            {
                // The proxy closed the kept connection after all: the CONNECT goes on a new one.
                await connection.close()
                continue
            } catch {
                await connection.close()
                throw error
            }
            let response = answer.response
            let first = hop.received(response, challenged: response.status == 407, to: request, origin: proxy.origin)
            let step = await settle(first, of: &hop, url: url, task: task, over: connection.tlsInfo)
            await perform(hop.takeEffects())
            switch step {
            case .retry:
                if answer.reusable { kept = connection } else { await connection.close() }
                continue
            case .fail(let error):
                await connection.close()
                throw error
            case .deliver, .lookUpCredential, .ask, .establish:
                break
            }
            guard (200..<300).contains(response.status) else {
                await connection.close()
                throw Self.refusal(response, of: authority, by: proxy, credentialSent: hop.attempt != nil)
            }
            return try await startOriginTLS(on: connection, to: origin, for: task, after: answer.leftover, offersHTTP2)
        }
        if let kept { await kept.close() }
        throw SesameError(.proxyAuthenticationFailed, "\(proxy) kept answering CONNECT to \(authority) with 407")
    }

    /// The proxy party of a `CONNECT` to `url`'s authority: a password written into the proxy's
    /// URL is consent to send it to that proxy, and a credential it took before goes at once.
    private func connectHop(to proxy: ProxyEndpoint, for url: URL, task: SessionTask?) throws -> AuthHop {
        var hop = AuthHop(
            .proxy,
            settings: taskSettings.proxy,
            task: task,
            hasTaskDelegate: task?.delegate != nil && task?.delegate !== delegate,
            hasSessionDelegate: delegate != nil
        )
        let proxyCredential = try proxyRouter.route(for: url).credential
        hop.route(through: proxy, credential: proxyCredential, known: proxyAuthorizations.withLock { $0[proxy] })
        return hop
    }

    /// A new connection to `proxy`: TCP, then TLS to an HTTPS proxy (trusted like any server,
    /// under the proxy's name).
    private func connectToProxy(
        _ proxy: ProxyEndpoint,
        for task: SessionTask?,
        deadline: ContinuousClock.Instant?
    ) async throws -> Connection {
        try await Connection.connect(
            host: proxy.host,
            port: proxy.port,
            tls: proxy.isTLS ? proxyTLS : nil,
            hooks: handshakeHooks(for: task),
            connectTimeout: connectLimit(by: deadline),
            nameCacheLifetime: configuration.nameCacheLifetime,
            on: loop
        )
    }

    /// TLS to the origin through the tunnel (inside TLS to an HTTPS proxy); the connection is
    /// closed when it fails.
    private func startOriginTLS(
        on connection: Connection,
        to origin: Origin,
        for task: SessionTask?,
        after leftover: [UInt8],
        _ offersHTTP2: Bool
    ) async throws -> Connection {
        do {
            try await connection.startTLS(
                serverName: origin.host,
                port: origin.port,
                tls: originTLS(offersHTTP2: offersHTTP2),
                hooks: handshakeHooks(for: task),
                alreadyReceived: leftover
            )
            return connection
        } catch {
            await connection.close()
            throw error
        }
    }

    /// The error for a `CONNECT` the proxy refused for good.
    private static func refusal(
        _ response: HTTPResponse,
        of authority: String,
        by proxy: ProxyEndpoint,
        credentialSent: Bool
    ) -> SesameError {
        guard response.status == 407 else {
            return SesameError(
                .proxyConnectFailed,
                "\(proxy) refused to CONNECT to \(authority): \(response.status) \(response.reason)"
            )
        }
        let what = credentialSent ? "and refused the credentials sent" : "and no credential for it was available"
        return SesameError(
            .proxyAuthenticationFailed,
            "\(proxy) asked for authentication (407) to CONNECT to \(authority) \(what)"
        )
    }

    /// Performs a party's look-ups and delegate questions until it says deliver, retry or fail.
    func settle(
        _ step: AuthHop.Step,
        of hop: inout AuthHop,
        url: URL,
        task: SessionTask?,
        over tls: TLSConnectionInfo?
    ) async -> AuthHop.Step {
        var step = step
        while true {
            switch step {
            case .lookUpCredential(let space):
                do {
                    step = hop.credentialFound(try await automaticCredential(for: space, url: url), url: url)
                } catch {
                    return .fail(error as? SesameError ?? SesameError(.credentialStoreFailed, "\(error)"))
                }
            case .ask(let entry, let challenge):
                step = hop.answered(await ask(entry, challenge, task: task), url: url)
            case .establish(let context, let input):
                step = hop.contextEstablished(await establish(context, input: input, over: tls), url: url)
            case .deliver, .retry, .fail:
                return step
            }
        }
    }

    /// A proxy credential worked: send it with later requests through the proxy, and store it as
    /// its persistence asks.
    func rememberProxy(_ attempt: ChallengeResolver.Attempt, for proxy: ProxyEndpoint) async {
        guard attempt.credential.persistence != .none, attempt.responder != .preemptive else { return }
        // An exchange (Negotiate, NTLM) answers one challenge: the next request gets one of its own.
        if case .exchange = attempt.authorizer {
            await store(attempt)
            return
        }
        let later = ChallengeResolver.Attempt(
            space: attempt.space,
            credential: attempt.credential,
            responder: .preemptive,
            authorizer: attempt.authorizer
        )
        proxyAuthorizations.withLock { $0[proxy] = later }
        await store(attempt)
    }

    /// A proxy refused what was sent without asking: stop sending it.
    func forgetProxy(_ proxy: ProxyEndpoint) {
        _ = proxyAuthorizations.withLock { $0.removeValue(forKey: proxy) }
    }
}
