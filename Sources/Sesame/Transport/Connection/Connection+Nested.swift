import Foundation

extension Connection {
    /// A TLS connection to `host`:`port` carried inside `transport`'s decrypted stream: TLS inside
    /// TLS, for a `CONNECT` tunnel through an HTTPS proxy.
    ///
    /// The inner connection is an ordinary ``Connection`` on one end of a local socket pair; a
    /// relay copies bytes between the other end and `transport` in both directions. Closing either
    /// side closes the other. `alreadyReceived` are tunnel bytes read past the proxy's response.
    static func nested(
        in transport: Connection,
        host: String,
        port: Int,
        tls: TLSConfiguration,
        hooks: TLSHandshakeHooks,
        alreadyReceived: [UInt8]
    ) async throws -> Connection {
        var fds: [Int32] = [-1, -1]
        let type = Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
        guard socketpair(AF_UNIX, type, 0, &fds) == 0 else {
            throw SesameError(.ioError, "socketpair(): \(errnoText())")
        }
        let loop = transport.loop
        let relaySide = Connection(
            host: transport.host,
            port: transport.port,
            tls: nil,
            hooks: .default,
            context: nil,
            connectTimeout: transport.connectTimeout,
            inlineWaitLimit: .zero,  // its reads are a relay's, always waiting
            loop: loop
        )
        let inner = Connection(
            host: host,
            port: port,
            tls: tls,
            hooks: hooks,
            context: try TLSContext.shared(for: tls),
            connectTimeout: transport.connectTimeout,
            inlineWaitLimit: transport.inlineWaitLimit,
            loop: loop
        )
        let address = "\(transport.remoteAddressDescription) (tunnel)"
        try await relaySide.adopt(descriptor: fds[1], addressDescription: address)
        if !alreadyReceived.isEmpty { try await relaySide.write(alreadyReceived) }
        TunnelRelay.start(between: transport, and: relaySide)
        try await inner.adopt(descriptor: fds[0], addressDescription: address)
        return inner
    }

    /// Starts on an already connected socket descriptor (taken over), as `connect` does after TCP: returns when the
    /// connection (and its TLS handshake, with every decision) is ready.
    private func adopt(descriptor: Int32, addressDescription: String) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let posted = loop.execute {
                    self.connectContinuation = continuation
                    self.phase = .connecting
                    self.armEstablishTimer()
                    self.begin(on: Socket(takingOwnership: descriptor), addressDescription: addressDescription)
                }
                if !posted {
                    Glibc.close(descriptor)
                    continuation.resume(throwing: SesameError(.eventLoopShutDown, "the event loop has shut down"))
                }
            }
        } onCancel: {
            loop.execute {
                self.fail(SesameError(.cancelled, "connecting to \(self.host):\(self.port) was cancelled"))
            }
        }
    }
}

/// Copies bytes both ways between two connections until either ends, then closes both.
enum TunnelRelay {
    static func start(between outer: Connection, and local: Connection) {
        Task {
            await pump(from: outer, to: local)
            await local.close()
            await outer.close()
        }
        Task {
            await pump(from: local, to: outer)
            await outer.close()
            await local.close()
        }
    }

    private static func pump(from source: Connection, to destination: Connection) async {
        do {
            while true {
                let bytes = try await source.read(maxLength: 65_536)
                if bytes.isEmpty { return }
                try await destination.write(bytes)
            }
        } catch {
            return  // either side failed or closed: the caller closes both
        }
    }
}
