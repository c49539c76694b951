extension Session {
    /// How a request to `origin` may use HTTP/2: nil for HTTP/1.1 only.
    private func http2Use(for origin: Origin) -> ConnectionPool.HTTP2Use? {
        if case .forward = origin.route { return nil }  // a forwarding proxy speaks HTTP/1.1
        switch configuration.httpVersion {
        case .http1_1: return nil
        case .http2: return origin.isTLS ? .negotiated : nil
        case .http2PriorKnowledge: return origin.isTLS ? .negotiated : .priorKnowledge
        }
    }

    /// The carrier for the next request to `origin`, from the pool, which opens what it lacks
    /// through ``openConnection(_:for:deadline:offersHTTP2:)`` on behalf of `task`.
    func carrier(
        for origin: Origin,
        task: SessionTask,
        deadline: ContinuousClock.Instant,
        http1Only: Bool,
        avoiding: (any AnyObject & Sendable)? = nil,
        preferring: Connection? = nil
    ) async throws -> ConnectionPool.Carrier {
        try await pool.carrier(
            for: origin,
            http2: http1Only ? nil : http2Use(for: origin),
            deadline: deadline,
            avoiding: avoiding,
            preferring: preferring
        ) { [self] origin, deadline, offersHTTP2 in
            try await openConnection(origin, for: task, deadline: deadline, offersHTTP2: offersHTTP2)
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
