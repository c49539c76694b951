internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Glibc
import Sesame

/// An HTTP/1.1 server on `127.0.0.1` (or `::1`) with an ephemeral port, for tests: plain or TLS
/// (OpenSSL on the server side, optional or required client certificates), one thread per
/// connection, scripted responses (including broken, stalling and early-closing ones), and a record
/// of what each connection did (handshake outcome, client certificate, requests, bytes received).
///
/// By default each request gets a `200 OK` whose body names the client certificate's subject;
/// ``Configuration/handler`` scripts anything else.
public final class LocalServer: Sendable {
    /// Whether and how the server asks for a client certificate.
    public enum ClientAuthentication: Sendable {
        /// Do not ask for a client certificate.
        case none
        /// Ask, accept a connection without one.
        case optional(trusting: [Certificate])
        /// Ask, and fail the handshake without one (TLS 1.2: alert in the handshake; TLS 1.3:
        /// `certificate required` after the client's Finished).
        case required(trusting: [Certificate])
    }

    /// What the server does.
    public struct Configuration: Sendable {
        /// The server's certificate and key; `nil` serves plain HTTP.
        public var identity: TestIssuedCertificate?
        /// Whether and how the server asks for a client certificate.
        public var clientAuthentication: ClientAuthentication = .none
        /// The lowest TLS version the server accepts.
        public var minimumVersion: TLSConfiguration.ProtocolVersion = .tls12
        /// The highest TLS version the server accepts; nil for the newest.
        public var maximumVersion: TLSConfiguration.ProtocolVersion? = nil
        /// ALPN protocols the server selects from, in its preference order; empty for no ALPN.
        public var applicationProtocols: [String] = []
        /// A DER OCSP response stapled to every handshake whose client asks for one (RFC 6066).
        public var stapledOCSPResponse: Data? = nil
        /// The port to listen on; 0 (the default) lets the system choose a free one.
        public var port = 0
        /// Listen on `::1` instead of `127.0.0.1`.
        public var useIPv6 = false
        /// Sends `100 Continue` to a request with `Expect: 100-continue` before reading its body.
        public var sendsContinue = true
        /// Keeps a record of every connection and request (``LocalServer/connections``,
        /// ``LocalServer/requests``). Off for long runs, where the record grows with every request;
        /// requests then carry no client-certificate subject (it is taken from the record).
        public var keepsRecords = true
        /// What to answer to a request; the default names the client certificate.
        public var handler: @Sendable (Request) -> Response = { request in
            .text("hello\nclient: \(request.clientCertificateSubject ?? "none")\n")
        }

        /// A TLS server with `identity`, or plain HTTP when `identity` is nil.
        public init(identity: TestIssuedCertificate?) { self.identity = identity }

        /// Plain HTTP.
        public static var plainHTTP: Configuration { Configuration(identity: nil) }
    }

    /// One accepted connection.
    public struct ConnectionRecord: Sendable {
        /// Whether the TLS handshake completed on the server's side.
        public var handshakeCompleted = false
        /// Why the handshake failed, in OpenSSL's words.
        public var handshakeError: String?
        /// The negotiated version, e.g. "TLSv1.3".
        public var protocolVersion: String?
        /// Whether the client resumed a session.
        public var sessionReused = false
        /// The ALPN protocol selected.
        public var applicationProtocol: String?
        /// The client certificate's subject, when one was sent and verified.
        public var clientCertificateSubject: String?
        /// Decrypted application bytes received from the client.
        public var applicationBytesReceived = 0
        /// Request heads received.
        public var requestHeads: [String] = []
        /// Requests received, in order.
        public var requests: [Request] = []
        /// The server name (SNI) the client sent, if any.
        public var serverName: String?
        /// True when the client ended the connection with a TLS close_notify.
        public var clientSentCloseNotify = false
        /// Whether the connection has ended.
        public var finished = false
    }

    /// The port the server listens on.
    public let port: Int
    /// "127.0.0.1" or "::1".
    public let host: String
    private let listenFD: Int32
    private let context: ServerContext?
    private let state = LockedValue<State>(State())
    private let configuration: Configuration

    private struct State {
        var records: [ConnectionRecord] = []
        var openDescriptors: Set<Int32> = []
        var stopped = false
    }

    /// Starts listening at once.
    ///
    /// - Note: ignores `SIGPIPE` for the process: OpenSSL writes to sockets with plain `write`, and a
    ///   client that goes away must not kill the test process.
    public init(_ configuration: Configuration) throws {
        signal(SIGPIPE, SIG_IGN)
        self.configuration = configuration
        context = try configuration.identity.map { try ServerContext(configuration, identity: $0) }
        let family = configuration.useIPv6 ? AF_INET6 : AF_INET
        host = configuration.useIPv6 ? "::1" : "127.0.0.1"
        let fd = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestingError("socket") }
        var one: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, socklen_t(MemoryLayout<Int32>.size))
        var bound: Int32
        if configuration.useIPv6 {
            var address = sockaddr_in6()
            address.sin6_family = sa_family_t(AF_INET6)
            address.sin6_addr = in6addr_loopback
            address.sin6_port = in_port_t(UInt16(clamping: configuration.port).bigEndian)
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = in_port_t(UInt16(clamping: configuration.port).bigEndian)
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            close(fd)
            throw TestingError("bind/listen on loopback: \(String(cString: strerror(errno)))")
        }
        var storage = sockaddr_storage()
        var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
        _ = withUnsafeMutablePointer(to: &storage) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = withUnsafeBytes(of: storage) { raw in
            // sin_port and sin6_port sit at the same offset, in network byte order.
            Int(UInt16(raw[2]) << 8 | UInt16(raw[3]))
        }
        listenFD = fd
        let server = self
        ServerThread.start { server.acceptLoop() }
    }

    deinit { close(listenFD) }

    /// "http" or "https".
    public var scheme: String { context == nil ? "http" : "https" }

    /// The base URL, e.g. `https://localhost:43121`.
    public var baseURL: String { "\(scheme)://\(host == "::1" ? "[::1]" : "localhost"):\(port)" }

    /// Every request so far, across connections.
    public var requests: [Request] { connections.flatMap(\.requests) }

    /// Every connection so far.
    public var connections: [ConnectionRecord] { state.withLock { $0.records } }

    /// Waits until at least `count` connections have ended (or `timeout` passed) and returns them all.
    public func finishedConnections(atLeast count: Int, timeout: Duration = .seconds(10)) async -> [ConnectionRecord] {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            let records = connections
            if records.filter(\.finished).count >= count { return records }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return connections
    }

    /// Stops accepting and closes every open connection.
    public func shutdown() {
        state.withLock { state in
            state.stopped = true
            // Under the lock: a connection's thread takes its descriptor out of the set (under the
            // lock) before closing it, so every number here is still this server's. Shut down after
            // the lock, a number could already belong to another socket of the process (a client
            // connection of another test), which then failed with "Broken pipe".
            for fd in state.openDescriptors { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
        }
        Glibc.shutdown(listenFD, Int32(SHUT_RDWR))
    }

    private func acceptLoop() {
        while true {
            let fd = CSesameShims_accept_cloexec(listenFD)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            // Child processes that tests start (openssl, nginx, sesame) must not inherit it.
            _ = fcntl(fd, F_SETFD, FD_CLOEXEC)
            let index = state.withLock { state -> Int? in
                guard !state.stopped else { return nil }
                state.openDescriptors.insert(fd)
                guard configuration.keepsRecords else { return -1 }
                state.records.append(ConnectionRecord())
                return state.records.count - 1
            }
            guard let index else {
                close(fd)
                return
            }
            // An idle connection is closed after two minutes: long enough for a test whose
            // connections wait while a loaded machine (the whole suite under ThreadSanitizer, on two
            // processors) sets up the others; shutdown() closes them at once anyway.
            var timeout = timeval(tv_sec: 120, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let server = self
            ServerThread.start { server.serve(fd: fd, index: index) }
        }
    }

    private func update(_ index: Int, _ change: (inout ConnectionRecord) -> Void) {
        guard index >= 0 else { return }  // records are not kept
        state.withLock { change(&$0.records[index]) }
    }

    private func serve(fd: Int32, index: Int) {
        defer {
            state.withLock { state in
                state.openDescriptors.remove(fd)
                if index >= 0 { state.records[index].finished = true }
            }
            close(fd)
        }
        let stream: ServerStream
        if let context {
            guard let tls = acceptTLS(fd: fd, context: context, index: index) else { return }
            stream = tls
        } else {
            stream = .plain(fd)
        }
        defer { stream.close() }
        let subject = index >= 0 ? connections[index].clientCertificateSubject : nil
        var reader = ServerRequestReader(stream: stream)
        var number = 0
        while true {
            let received: ServerRequestReader.Received
            do {
                received = try reader.next(sendsContinue: configuration.sendsContinue) { count in
                    self.update(index) { $0.applicationBytesReceived += count }
                }
            } catch {
                update(index) { $0.handshakeError = $0.handshakeError ?? "\(error)" }
                return
            }
            guard case .request(let head, let body) = received else {
                if case .closeNotify = received { update(index) { $0.clientSentCloseNotify = true } }
                return
            }
            let request = Request(
                head: head,
                body: body,
                clientCertificateSubject: subject,
                connectionIndex: index,
                number: number
            )
            number += 1
            update(index) {
                $0.requestHeads.append(head)
                $0.requests.append(request)
            }
            let response = configuration.handler(request)
            if let delay = response.delay { ServerThread.sleep(delay) }
            switch response.kind {
            case .stall:
                // Hold the connection open, sending nothing, until the client or shutdown ends it.
                _ = reader.drainUntilClosed()
                return
            case .close:
                return
            case .bytes(let bytes, let thenClose):
                guard stream.write(bytes) else { return }
                if thenClose { return }
            case .tunnel(let port):
                guard stream.write(Array("HTTP/1.1 200 Connection established\r\n\r\n".utf8)) else { return }
                Self.relay(stream, first: reader.takePending(), toPort: port)
                return
            }
        }
    }

    /// The server side of a TLS handshake; nil when it failed (recorded).
    private func acceptTLS(fd: Int32, context: ServerContext, index: Int) -> ServerStream? {
        guard let ssl = SSL_new(context.pointer) else { return nil }
        SSL_set_fd(ssl, fd)
        ERR_clear_error()
        guard SSL_accept(ssl) == 1 else {
            let reason = TestingError("handshake").description
            update(index) { $0.handshakeError = reason }
            SSL_free(ssl)
            return nil
        }
        var subject: String? = nil
        if let peer = SSL_get1_peer_certificate(ssl) {
            subject = (try? Certificate(derEncoded: OwnedX509(takingOwnership: peer).der))?.subject.description
        }
        var alpn: UnsafePointer<UInt8>? = nil
        var alpnLength: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &alpn, &alpnLength)
        let selected = alpn.map {
            String(decoding: UnsafeBufferPointer(start: $0, count: Int(alpnLength)), as: UTF8.self)
        }
        let version = String(cString: SSL_get_version(ssl))
        let reused = SSL_session_reused(ssl) == 1
        let serverName = SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) }
        update(index) {
            $0.serverName = serverName
            $0.handshakeCompleted = true
            $0.protocolVersion = version
            $0.sessionReused = reused
            $0.clientCertificateSubject = subject
            $0.applicationProtocol = selected
        }
        return .tls(OwnedSSL(takingOwnership: ssl))
    }
}
