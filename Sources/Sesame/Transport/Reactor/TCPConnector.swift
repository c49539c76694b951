import FoundationEssentials
import Glibc

/// Connects a TCP socket to the first address that accepts, in order, within one overall timeout.
/// Loop-confined: create and start it on the loop; `completion` runs on the loop, exactly once.
final class TCPConnector {
    private let loop: EventLoop
    private var addresses: ArraySlice<SocketAddress>
    private var completion: ((Result<(Socket, SocketAddress), SesameError>) -> Void)?
    private var current: (socket: Socket, address: SocketAddress)?
    private var timer: TimerHandle?
    private var failures: [String] = []
    private var retriedAfterReset = false
    private let host: String

    init(
        loop: EventLoop,
        host: String,
        addresses: [SocketAddress],
        completion: @escaping (Result<(Socket, SocketAddress), SesameError>) -> Void
    ) {
        self.loop = loop
        self.host = host
        self.addresses = addresses[...]
        self.completion = completion
    }

    func start(timeout: Duration) {
        assert(loop.inEventLoop)
        timer = loop.scheduleTimer(after: timeout) { [self] in
            finish(.failure(SesameError(.connectTimeout, "\(host): no TCP connection within \(timeout)")))
        }
        tryNext()
    }

    /// Stops trying; the completion is called with `error`.
    func cancel(_ error: SesameError) {
        finish(.failure(error))
    }

    private func tryNext() {
        guard completion != nil else { return }
        guard let address = addresses.popFirst() else {
            let detail = failures.isEmpty ? "no address" : failures.joined(separator: "; ")
            finish(.failure(SesameError(.connectFailed, "could not connect to \(host): \(detail)")))
            return
        }
        let socket: Socket
        do {
            socket = try Socket.makeTCP(family: address.family)
        } catch {
            failures.append("\(address): \(error)")
            tryNext()
            return
        }
        let result = address.withSockAddr { Glibc.connect(socket.fd, $0, $1) }
        if result == 0 {
            finish(.success((socket, address)))
            return
        }
        guard errno == EINPROGRESS else {
            failures.append("\(address): \(errnoText())")
            socket.close()
            tryNext()
            return
        }
        current = (socket, address)
        do {
            try loop.register(
                fd: socket.fd,
                interest: EpollEvents.writable,
                shutDown: { [self] in
                    cancel(SesameError(.eventLoopShutDown, "connecting to \(host): the event loop shut down"))
                },
                handler: { [self] _ in connectReady() }
            )
        } catch {
            failures.append("\(address): \(error)")
            current = nil
            socket.close()
            tryNext()
        }
    }

    private func connectReady() {
        guard let (socket, address) = current else { return }
        loop.deregister(fd: socket.fd)
        current = nil
        let error = socket.pendingError
        if error == 0 {
            finish(.success((socket, address)))
        } else if error == ECONNRESET && !retriedAfterReset {
            // A reset answering a fresh SYN is transient (the peer still held an old connection
            // with the same addresses and ports, which loopback's quick port reuse makes likely):
            // try the same address once more before moving on.
            retriedAfterReset = true
            socket.close()
            addresses.insert(address, at: addresses.startIndex)
            tryNext()
        } else {
            failures.append("\(address): \(errnoText(error))")
            socket.close()
            tryNext()
        }
    }

    private func finish(_ result: Result<(Socket, SocketAddress), SesameError>) {
        guard let completion else {
            if case .success(let (socket, _)) = result { socket.close() }
            return
        }
        self.completion = nil
        if let timer { loop.cancelTimer(timer) }
        if let (socket, _) = current {
            loop.deregister(fd: socket.fd)
            socket.close()
            current = nil
        }
        completion(result)
    }
}
