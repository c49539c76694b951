internal import COpenSSL
internal import CSesameShims
import Foundation
import Sesame

/// A TLS server on `127.0.0.1` (or `::1`) with an ephemeral port, for tests: OpenSSL on the server
/// side, one thread per connection, optional or required client certificates, and a record of what
/// each connection did (handshake outcome, client certificate, application bytes received).
///
/// Each request (an HTTP/1.1 head plus a `Content-Length` body) gets a `200 OK` whose body names the
/// client certificate's subject, or what ``Configuration/respond`` returns.
public final class LocalTLSServer: Sendable {
    /// Whether and how the server asks for a client certificate.
    public enum ClientAuthentication: Sendable {
        case none
        /// Ask, accept a connection without one.
        case optional(trusting: [Certificate])
        /// Ask, and fail the handshake without one (TLS 1.2: alert in the handshake; TLS 1.3:
        /// `certificate required` after the client's Finished).
        case required(trusting: [Certificate])
    }

    /// A request as the server saw it.
    public struct Request: Sendable {
        public let head: String
        public let body: [UInt8]
        public let clientCertificateSubject: String?
    }

    /// What the server does.
    public struct Configuration: Sendable {
        public var identity: TestIssuedCertificate
        public var clientAuthentication: ClientAuthentication = .none
        public var minimumVersion: TLSConfiguration.ProtocolVersion = .tls12
        public var maximumVersion: TLSConfiguration.ProtocolVersion? = nil
        public var applicationProtocols: [String] = []
        /// Listen on `::1` instead of `127.0.0.1`.
        public var useIPv6 = false
        /// The response body for a request; the default names the client certificate.
        public var respond: @Sendable (Request) -> String = { request in
            "hello\nclient: \(request.clientCertificateSubject ?? "none")\n"
        }

        public init(identity: TestIssuedCertificate) { self.identity = identity }
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
    private let context: ServerContext
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
        context = try ServerContext(configuration)
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
            bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in6>.size))
                }
            }
        } else {
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
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
        Thread.detachNewThread { server.acceptLoop() }
    }

    deinit { close(listenFD) }

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
        let open = state.withLock { state -> Set<Int32> in
            state.stopped = true
            return state.openDescriptors
        }
        Glibc.shutdown(listenFD, Int32(SHUT_RDWR))
        for fd in open { Glibc.shutdown(fd, Int32(SHUT_RDWR)) }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listenFD, nil, nil)
            if fd < 0 {
                if errno == EINTR { continue }
                return
            }
            let index = state.withLock { state -> Int? in
                guard !state.stopped else { return nil }
                state.records.append(ConnectionRecord())
                state.openDescriptors.insert(fd)
                return state.records.count - 1
            }
            guard let index else {
                close(fd)
                return
            }
            var timeout = timeval(tv_sec: 30, tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            let server = self
            Thread.detachNewThread { server.serve(fd: fd, index: index) }
        }
    }

    private func update(_ index: Int, _ change: (inout ConnectionRecord) -> Void) {
        state.withLock { change(&$0.records[index]) }
    }

    private func serve(fd: Int32, index: Int) {
        defer {
            state.withLock { state in
                state.openDescriptors.remove(fd)
                state.records[index].finished = true
            }
            close(fd)
        }
        guard let ssl = SSL_new(context.pointer) else { return }
        defer { SSL_free(ssl) }
        SSL_set_fd(ssl, fd)
        ERR_clear_error()
        guard SSL_accept(ssl) == 1 else {
            let reason = TestingError("handshake").description
            update(index) { $0.handshakeError = reason }
            return
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
        var pending: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16_384)
        while true {
            let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if count <= 0 {
                if SSL_get_error(ssl, count) == SSL_ERROR_ZERO_RETURN {
                    update(index) { $0.clientSentCloseNotify = true }
                } else {
                    // TLS 1.3: a client-certificate failure surfaces on the server's first read.
                    let reason = TestingError("read").description
                    update(index) { $0.handshakeError = $0.handshakeError ?? reason }
                }
                break
            }
            update(index) { $0.applicationBytesReceived += Int(count) }
            pending.append(contentsOf: buffer[0..<Int(count)])
            while let request = Self.takeRequest(&pending, clientCertificateSubject: subject) {
                update(index) { $0.requestHeads.append(request.head) }
                let body = Array(configuration.respond(request).utf8)
                let head = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: \(body.count)\r\n\r\n"
                let response = Array(head.utf8) + body
                let written = response.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
                if written <= 0 { return }
            }
        }
        SSL_shutdown(ssl)
    }

    /// Takes one complete request (head and Content-Length body) off the front of `buffer`.
    static func takeRequest(_ buffer: inout [UInt8], clientCertificateSubject: String?) -> Request? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = buffer.indices.dropLast(3).first(where: { Array(buffer[$0..<$0 + 4]) == separator }) else {
            return nil
        }
        let head = String(decoding: buffer[0..<end], as: UTF8.self)
        var length = 0
        for line in head.split(separator: "\r\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length" {
                length = Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0
            }
        }
        guard buffer.count >= end + 4 + length else { return nil }
        let body = Array(buffer[(end + 4)..<(end + 4 + length)])
        buffer.removeFirst(end + 4 + length)
        return Request(head: head, body: body, clientCertificateSubject: clientCertificateSubject)
    }
}

/// The server's `SSL_CTX`. Immutable once built.
final class ServerContext: @unchecked Sendable {
    let pointer: OpaquePointer

    init(_ configuration: LocalTLSServer.Configuration) throws {
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw TestingError("SSL_CTX_new") }
        pointer = context
        _ = CSesameShims_SSL_CTX_set_min_proto_version(context, Int32(configuration.minimumVersion.rawValue))
        _ = CSesameShims_SSL_CTX_set_max_proto_version(context, Int32(configuration.maximumVersion?.rawValue ?? 0))
        let identity = configuration.identity
        guard SSL_CTX_use_certificate(context, identity.x509.pointer) == 1,
            SSL_CTX_use_PrivateKey(context, identity.key.pointer) == 1
        else { throw TestingError("server certificate") }
        for intermediate in identity.issuerChain {
            _ = CSesameShims_SSL_CTX_add1_chain_cert(context, intermediate.x509.pointer)
        }
        let sessionContext: [UInt8] = Array("sesame-test".utf8)
        SSL_CTX_set_session_id_context(context, sessionContext, UInt32(sessionContext.count))
        switch configuration.clientAuthentication {
        case .none:
            break
        case .optional(let trusted), .required(let trusted):
            let store = SSL_CTX_get_cert_store(context)
            for certificate in trusted {
                let x509 = try Self.x509(certificate)
                X509_STORE_add_cert(store, x509.pointer)
                SSL_CTX_add_client_CA(context, x509.pointer)
            }
            var mode = SSL_VERIFY_PEER
            if case .required = configuration.clientAuthentication { mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT }
            SSL_CTX_set_verify(context, mode, nil)
        }
        if !configuration.applicationProtocols.isEmpty {
            let box = ALPNPreference(configuration.applicationProtocols)
            alpn = box
            SSL_CTX_set_alpn_select_cb(
                context,
                { _, out, outLength, input, inputLength, arg in
                    guard let arg, let input, let out, let outLength else { return SSL_TLSEXT_ERR_NOACK }
                    let preference = Unmanaged<ALPNPreference>.fromOpaque(arg).takeUnretainedValue()
                    var cursor = 0
                    while cursor < Int(inputLength) {
                        let length = Int(input[cursor])
                        let name = String(
                            decoding: UnsafeBufferPointer(start: input + cursor + 1, count: length),
                            as: UTF8.self
                        )
                        if preference.names.contains(name) {
                            out.pointee = input + cursor + 1
                            outLength.pointee = UInt8(length)
                            return SSL_TLSEXT_ERR_OK
                        }
                        cursor += 1 + length
                    }
                    return SSL_TLSEXT_ERR_NOACK
                },
                Unmanaged.passUnretained(box).toOpaque()
            )
        }
    }

    private var alpn: ALPNPreference?

    static func x509(_ certificate: Certificate) throws -> OwnedX509 {
        let bytes = [UInt8](certificate.derEncoded)
        let x509: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_X509(nil, &cursor, buffer.count)
        }
        guard let x509 else { throw TestingError("certificate") }
        return OwnedX509(takingOwnership: x509)
    }

    deinit { SSL_CTX_free(pointer) }
}

final class ALPNPreference: Sendable {
    let names: [String]
    init(_ names: [String]) { self.names = names }
}
