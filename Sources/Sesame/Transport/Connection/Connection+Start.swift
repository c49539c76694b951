import FoundationEssentials
import Glibc

// Connecting: TCP to the resolved addresses, the socket's registration, and the TLS session.
// Everything here runs on the connection's event loop.
extension Connection {
    func start(addresses: [SocketAddress], continuation: CheckedContinuation<Void, any Error>) {
        assert(loop.inEventLoop)
        if let failure {
            continuation.resume(throwing: failure)
            return
        }
        connectContinuation = continuation
        phase = .connecting
        armEstablishTimer()
        let connector = TCPConnector(loop: loop, host: "\(host):\(port)", addresses: addresses) { [self] result in
            self.connector = nil
            switch result {
            case .failure(let error): fail(error)
            case .success(let (socket, address)): tcpConnected(socket, address)
            }
        }
        self.connector = connector
        connector.start(timeout: connectTimeout)
    }

    private func tcpConnected(_ socket: Socket, _ address: SocketAddress) {
        guard phase == .connecting else {
            socket.close()
            return
        }
        self.remoteAddress = address
        begin(on: socket, addressDescription: address.description)
    }

    /// Takes a connected socket: registers it, then (with TLS) starts the handshake.
    func begin(on socket: Socket, addressDescription: String) {
        let channel = SocketChannel(socket: socket, loop: loop)
        self.channel = channel
        addressBox.withLock { $0 = addressDescription }
        do {
            if let context { try setUpTLS(context, serverName: host, port: port) }
            try channel.register(
                shutDown: { [weak self] in
                    guard let self else { return }
                    fail(SesameError(.eventLoopShutDown, "\(host):\(port): the event loop shut down"))
                },
                handler: { [weak self] events in self?.socketEvent(events) }
            )
        } catch let error as SesameError {
            fail(error)
            return
        } catch {
            fail(SesameError(.tlsHandshakeFailed, "\(error)"))
            return
        }
        guard usesTLS else {
            phase = .established
            readState = .idle
            cancelEstablishTimer()
            connectContinuation?.resume()
            connectContinuation = nil
            return
        }
        phase = .handshaking
        readState = .handshaking
        armHandshakeTimer()
        driveHandshake()
        updateInterest()
    }

    /// Starts a TLS session for `serverName`:`port` over this connection's bytes.
    @discardableResult
    func setUpTLS(_ context: TLSContext, serverName: String, port: Int) throws(SesameError) -> TLSEngine {
        let engine = try TLSEngine(
            context: context,
            configuration: configuration,
            serverName: serverName,
            port: port,
            inboundCapacity: Connection.inboundCapacity
        )
        tls = engine
        return engine
    }

    func publish(_ info: TLSConnectionInfo) { infoBox.withLock { $0 = info } }
}
