extension Session {
    /// What carries one request: a leased HTTP/1.1 connection, or a stream slot on an HTTP/2 one.
    enum Carrier {
        case http1(ConnectionPool.Lease)
        /// `reused`: the connection carried streams before this one.
        case http2(HTTP2Connection, reused: Bool)
    }

    /// How a request to `origin` may use HTTP/2: nil for HTTP/1.1 only.
    private enum HTTP2Mode {
        /// Over TLS, when ALPN picks `h2`.
        case negotiated
        /// Over plain TCP from the first byte (h2c).
        case priorKnowledge
    }

    private func http2Mode(for origin: Origin) -> HTTP2Mode? {
        if case .forward = origin.route { return nil }  // a forwarding proxy speaks HTTP/1.1
        switch configuration.httpVersion {
        case .http1_1: return nil
        case .http2: return origin.isTLS ? .negotiated : nil
        case .http2PriorKnowledge: return origin.isTLS ? .negotiated : .priorKnowledge
        }
    }

    /// The carrier for the next request to `origin`: a stream when the origin speaks HTTP/2
    /// (opening the connection that finds out, one at a time), a pooled HTTP/1.1 connection
    /// otherwise.
    func carrier(
        for origin: Origin,
        task: SessionTask,
        deadline: ContinuousClock.Instant,
        http1Only: Bool,
        avoiding: HTTP2Connection? = nil,
        preferring: Connection? = nil
    ) async throws -> Carrier {
        guard !http1Only, let mode = http2Mode(for: origin) else {
            return .http1(try await leaseHTTP1(origin, task: task, deadline: deadline, preferring: preferring))
        }
        while true {
            switch try await http2Pool.claim(origin, deadline: deadline, avoiding: avoiding) {
            case .stream(let connection):
                // A connection that sat idle proves it is alive first (a PING), so that the
                // request does not go into a connection a NAT or the server dropped in silence.
                if let threshold = configuration.http2IdlePingThreshold, let idle = connection.takeIdleSpan(),
                    idle >= threshold
                {
                    do {
                        try await connection.ping(timeout: min(configuration.connectTimeout, .seconds(5)))
                    } catch {
                        connection.cancelReservation()  // the failed connection is retired; claim again
                        continue
                    }
                }
                return .http2(connection, reused: true)
            case .http1:
                return .http1(try await leaseHTTP1(origin, task: task, deadline: deadline, preferring: preferring))
            case .open:
                let connection: Connection
                do {
                    connection = try await openConnection(origin, for: task, deadline: deadline, offersHTTP2: true)
                } catch {
                    http2Pool.openFailed(origin)
                    throw error
                }
                guard mode == .priorKnowledge || connection.tlsInfo?.applicationProtocol == "h2" else {
                    http2Pool.speaksHTTP1(origin)
                    return .http1(pool.adopt(connection, for: origin))
                }
                let http2: HTTP2Connection
                do {
                    let pool = http2Pool
                    http2 = try HTTP2Connection(
                        connection,
                        origin: origin,
                        idleTimeout: configuration.idleTimeout,
                        onRetire: { [weak pool] in pool?.retired($0) },
                        onSlotFreed: { [weak pool] in pool?.slotFreed(on: $0) }
                    )
                } catch {
                    http2Pool.openFailed(origin)
                    await connection.close()
                    throw error
                }
                http2.start()
                http2Pool.opened(origin, http2)
                return .http2(http2, reused: false)
            }
        }
    }

    private func leaseHTTP1(
        _ origin: Origin,
        task: SessionTask,
        deadline: ContinuousClock.Instant,
        preferring: Connection?
    ) async throws -> ConnectionPool.Lease {
        try await pool.acquire(origin, deadline: deadline, preferring: preferring) { [self] origin, deadline in
            try await openConnection(origin, for: task, deadline: deadline, offersHTTP2: false)
        }
    }

    /// The TLS settings for a connection to an origin, offering `h2` or not.
    func originTLS(offersHTTP2: Bool) -> TLSConfiguration {
        var tls = configuration.tls
        tls.applicationProtocols = offersHTTP2 ? ["h2", "http/1.1"] : ["http/1.1"]
        return tls
    }

    /// The TLS settings for a connection to an HTTPS proxy (spoken to in HTTP/1.1).
    var proxyTLS: TLSConfiguration { originTLS(offersHTTP2: false) }
}
