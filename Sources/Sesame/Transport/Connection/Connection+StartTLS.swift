import FoundationEssentials
import Glibc

extension Connection {
    /// Starts TLS on this established connection: the bytes after a proxy's `CONNECT` response.
    /// The handshake is for `serverName`:`port` (SNI, trust decision, session cache), with every
    /// decision and check of ``connect(host:port:tls:hooks:connectTimeout:nameCacheLifetime:on:)``;
    /// it returns when the tunnel carries TLS to that server. On a connection that already uses
    /// TLS (to an HTTPS proxy), the new session runs inside the first one's data: TLS inside TLS,
    /// and ``tlsInfo`` then describes the inner session. `alreadyReceived` are bytes read past the
    /// proxy's response head (they belong to the new TLS stream).
    /// - Throws: ``SesameError`` as `connect` does; ``SesameError/Code/invalidArgument`` when the
    ///   connection is not established, has a read waiting, or already carries a tunnel.
    public func startTLS(
        serverName: String,
        port: Int,
        tls: TLSConfiguration,
        hooks: TLSHandshakeHooks = .default,
        alreadyReceived: [UInt8] = []
    ) async throws {
        let context = try TLSContext.shared(for: tls)
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let posted = loop.execute {
                    self.beginTLS(
                        serverName: serverName,
                        port: port,
                        tls: tls,
                        hooks: hooks,
                        context: context,
                        received: alreadyReceived,
                        continuation
                    )
                }
                if !posted {
                    continuation.resume(throwing: SesameError(.eventLoopShutDown, "the event loop has shut down"))
                }
            }
        } onCancel: {
            loop.execute {
                self.fail(SesameError(.cancelled, "the TLS handshake with \(serverName):\(port) was cancelled"))
            }
        }
    }

    private func beginTLS(
        serverName: String,
        port: Int,
        tls: TLSConfiguration,
        hooks: TLSHandshakeHooks,
        context: TLSContext,
        received: [UInt8],
        _ continuation: CheckedContinuation<Void, any Error>
    ) {
        if let failure {
            continuation.resume(throwing: failure)
            return
        }
        let carriesTLS = self.tls?.isEstablished == true
        guard phase == .established, pendingRead == nil, carrier == nil, self.tls == nil || carriesTLS else {
            continuation.resume(
                throwing: SesameError(
                    .invalidArgument,
                    "TLS can start only on an idle, established connection that carries no tunnel yet"
                )
            )
            return
        }
        if carriesTLS { carrier = self.tls }  // the new session runs inside this one
        configuration = tls
        self.hooks = hooks
        self.context = context
        usesTLS = true
        let engine: TLSEngine
        do {
            engine = try setUpTLS(context, serverName: serverName, port: port)
        } catch {
            continuation.resume(throwing: error)
            fail(error)
            return
        }
        // Bytes the proxy sent after its response head already belong to the TLS stream.
        let pending = received + inbound[inboundOffset...]
        if !pending.isEmpty {
            // The server speaks only after the ClientHello: nothing of it can be here yet, and
            // whatever is cannot be TLS.
            guard pending.withUnsafeBytes({ engine.receive($0) }) == pending.count else {
                let error = SesameError(
                    .protocolError,
                    "\(host):\(port) sent \(pending.count) bytes before the TLS handshake began"
                )
                continuation.resume(throwing: error)
                fail(error)
                return
            }
        }
        inbound.removeAll()
        inboundOffset = 0
        connectContinuation = continuation
        phase = .handshaking
        readState = .handshaking
        armEstablishTimer()
        armHandshakeTimer()
        driveHandshake()
        updateInterest()
    }
}
