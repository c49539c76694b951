import FoundationEssentials
import Glibc

/// A tunnel being opened for a task: the pool's slot for the connection, and the connection to
/// the proxy the last `CONNECT` went on, with what came after the proxy's answer and whether the
/// proxy keeps the connection after a refusal.
struct TunnelOpening: Sendable {
    let slot: ConnectionPool.OpeningSlot
    var answered: (connection: Connection, leftover: [UInt8], reusable: Bool)?

    init(_ slot: ConnectionPool.OpeningSlot) { self.slot = slot }

    /// The connection the next `CONNECT` goes on: the last one, when the proxy keeps it (NTLM's
    /// three messages must share one); one the proxy does not keep is closed.
    mutating func takeKept() async -> Connection? {
        guard let last = answered else { return nil }
        answered = nil
        if last.reusable { return last.connection }
        await last.connection.close()
        return nil
    }

    /// Closes the connection to the proxy; the slot goes back to the pool when this is dropped.
    mutating func close() async {
        await answered?.connection.close()
        answered = nil
    }
}

extension Session {
    /// Opens the connection for `slot`, straight to the origin or to a forwarding proxy, and
    /// hands it to the pool, which makes it the request's carrier.
    func carrier(
        opening slot: ConnectionPool.OpeningSlot,
        for task: SessionTask,
        deadline: ContinuousClock.Instant,
        asking opening: ConnectionOpening
    ) async throws -> ConnectionPool.Carrier {
        let origin = slot.origin
        let connection: Connection
        do {
            connection = try await Connection.connect(
                host: origin.route.proxy?.host ?? origin.host,
                port: origin.route.proxy?.port ?? origin.port,
                tls: try tls(for: origin, offersHTTP2: slot.offersHTTP2),
                hooks: handshakeHooks(for: task, asking: opening),
                connectTimeout: connectLimit(by: deadline),
                nameCacheLifetime: configuration.nameCacheLifetime,
                on: loop
            )
        } catch {
            pool.openFailed(slot)
            throw error
        }
        return try await pool.opened(slot, connection)
    }

    /// The TLS settings of a connection opened for `origin`: the origin's own, or for a
    /// forwarding proxy reached over TLS, the proxy's (trusted like any server: the proxy's
    /// name, the session's roots); nil for plain TCP.
    private func tls(for origin: Origin, offersHTTP2: Bool) throws -> TLSConfiguration? {
        switch origin.route {
        case .direct: return origin.isTLS ? originTLS(offersHTTP2: offersHTTP2) : nil
        case .forward(let proxy): return proxy.isTLS ? proxyTLS : nil
        case .tunnel:
            throw SesameError(.internalError, "a tunnel to \(origin) is opened by the task's driver, not directly")
        }
    }

    /// The time a new connection may take: the connect timeout, or what is left of the task's
    /// deadline when that is sooner (never less than a millisecond, so the limit is the one that ends it).
    func connectLimit(by deadline: ContinuousClock.Instant?) -> Duration {
        guard let deadline else { return configuration.connectTimeout }
        return max(.milliseconds(1), min(configuration.connectTimeout, loop.now.duration(to: deadline)))
    }

    /// The credential the session keeps for `proxy`, sent with a tunnel's first `CONNECT`.
    func knownTunnelAttempt(for exchange: TaskStateMachine.Exchange) -> ChallengeResolver.Attempt? {
        guard case .tunnel(let proxy) = exchange.route else { return nil }
        return proxyAuthorizations.withLock { $0[proxy] }
    }

    /// Sends one `CONNECT` of a tunnel being opened, on `kept` (the connection the proxy kept
    /// after its last answer) else on a new one, and returns the proxy's answer; a kept connection
    /// the proxy closed after all is replaced once.
    func connectTunnel(
        _ request: TaskStateMachine.TunnelRequest,
        on kept: Connection?,
        for task: SessionTask,
        deadline: ContinuousClock.Instant,
        asking opening: ConnectionOpening
    ) async throws -> ConnectionOpening.Outcome {
        var kept = kept
        // Twice at most: the second time on a new connection.
        for _ in 0..<2 {
            let connection: Connection
            if let kept {
                connection = kept
            } else {
                connection = try await connectToProxy(request.proxy, for: task, deadline: deadline, asking: opening)
            }
            do {
                let answer = try await ProxyTunnel.connect(
                    connection,
                    authority: request.authority,
                    proxy: request.proxy,
                    proxyAuthorization: request.proxyAuthorization,
                    userAgent: configuration.defaultHeaders.first("User-Agent"),
                    timeout: min(configuration.requestTimeout, loop.now.duration(to: deadline)),
                    observer: configuration.eventObserver
                )
                return .tunnelAnswer(
                    answer.response,
                    connection: connection,
                    leftover: answer.leftover,
                    reusable: answer.reusable
                )
            } catch let error as SesameError
                where kept != nil && (error.code == .connectionClosed || error.code == .connectionReset)
            {
                await connection.close()
                kept = nil
            } catch {
                await connection.close()
                throw error
            }
        }
        throw SesameError(
            .proxyConnectFailed,
            "\(request.proxy) closed every connection CONNECT to \(request.authority) went on"
        )
    }

    /// The proxy opened the tunnel: TLS to the origin inside it, and the connection to the pool,
    /// which makes it the request's carrier.
    func carrier(
        through tunnel: TunnelOpening,
        for task: SessionTask,
        asking opening: ConnectionOpening
    ) async throws -> ConnectionPool.Carrier {
        let slot = tunnel.slot
        guard let (connection, leftover, _) = tunnel.answered else {
            throw SesameError(.internalError, "a tunnel to \(slot.origin) was used before the proxy answered")
        }
        do {
            try await connection.startTLS(
                serverName: slot.origin.host,
                port: slot.origin.port,
                tls: originTLS(offersHTTP2: slot.offersHTTP2),
                hooks: handshakeHooks(for: task, asking: opening),
                alreadyReceived: leftover
            )
        } catch {
            await connection.close()
            pool.openFailed(slot)
            throw error
        }
        return try await pool.opened(slot, connection)
    }

    /// A new connection to `proxy`: TCP, then TLS to an HTTPS proxy (trusted like any server,
    /// under the proxy's name).
    private func connectToProxy(
        _ proxy: ProxyEndpoint,
        for task: SessionTask,
        deadline: ContinuousClock.Instant?,
        asking opening: ConnectionOpening
    ) async throws -> Connection {
        try await Connection.connect(
            host: proxy.host,
            port: proxy.port,
            tls: proxy.isTLS ? proxyTLS : nil,
            hooks: handshakeHooks(for: task, asking: opening),
            connectTimeout: connectLimit(by: deadline),
            nameCacheLifetime: configuration.nameCacheLifetime,
            on: loop
        )
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
