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

    /// What the pool gives the next request of `exchange`: a carrier, or the slot to open a
    /// connection.
    func grant(
        for exchange: TaskStateMachine.Exchange,
        deadline: ContinuousClock.Instant,
        preferring: Connection? = nil
    ) async throws -> ConnectionPool.Grant {
        let origin = exchange.routedOrigin
        return try await pool.carrier(
            for: origin,
            http2: exchange.http1Only ? nil : http2Use(for: origin),
            deadline: deadline,
            avoiding: exchange.avoiding,
            preferring: preferring
        )
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
