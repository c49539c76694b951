internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Glibc
import Sesame

/// A TLS server over byte buffers, with no socket: to test a TLS client back to back in memory.
///
/// The server is made from a ``LocalServer/Configuration`` (its identity, versions, client
/// authentication, ALPN and OCSP staple); each ``accept()`` gives one server side of a session.
/// Sessions of one server share its context, so a client can resume a session across them.
/// Not thread-safe: a test drives it from one thread (or one task) at a time.
public final class InMemoryTLSServer: @unchecked Sendable {
    // @unchecked: the context is immutable once built; sessions are not shared across threads.
    let context: ServerContext

    /// A server with `configuration`'s identity, versions, client authentication, ALPN and OCSP
    /// staple.
    /// - Throws: when the configuration has no identity, or OpenSSL refuses it.
    public init(_ configuration: LocalServer.Configuration) throws {
        guard let identity = configuration.identity else {
            throw TestingError("an in-memory TLS server needs an identity")
        }
        context = try ServerContext(configuration, identity: identity)
    }

    /// The server side of a new session, waiting for a ClientHello.
    public func accept() throws -> Session { try Session(context: context) }

    /// One server side of a session, over two memory BIOs.
    public final class Session {
        private let ssl: OpaquePointer
        private let input: OpaquePointer
        private let output: OpaquePointer

        init(context: ServerContext) throws {
            guard let ssl = SSL_new(context.pointer) else { throw TestingError("SSL_new") }
            guard let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
                SSL_free(ssl)
                throw TestingError("BIO_new")
            }
            // An empty memory BIO means "more later", not the end of the stream.
            _ = BIO_ctrl(input, BIO_C_SET_BUF_MEM_EOF_RETURN, -1, nil)
            SSL_set_bio(ssl, input, output)  // the SSL owns both from here on
            SSL_set_accept_state(ssl)
            self.ssl = ssl
            self.input = input
            self.output = output
        }

        deinit { SSL_free(ssl) }

        /// Takes ciphertext from the client.
        public func receive(_ bytes: [UInt8]) {
            guard !bytes.isEmpty else { return }
            _ = bytes.withUnsafeBytes { BIO_write(input, $0.baseAddress, Int32($0.count)) }
        }

        /// The ciphertext for the client produced since the last call.
        public func takeOutput() -> [UInt8] {
            let pending = Int(BIO_ctrl_pending(output))
            guard pending > 0 else { return [] }
            var bytes = [UInt8](repeating: 0, count: pending)
            let read = bytes.withUnsafeMutableBytes { BIO_read(output, $0.baseAddress, Int32(pending)) }
            return Array(bytes.prefix(max(0, Int(read))))
        }

        /// How far the handshake got.
        public enum HandshakeState: Equatable, Sendable {
            /// Waiting for more bytes from the client.
            case inProgress
            /// Done: application data may flow.
            case complete
            /// Failed, with OpenSSL's reasons (an alert for the client is in ``takeOutput()``).
            case failed(String)
        }

        /// Runs the server's handshake as far as what was received allows.
        public func handshake() -> HandshakeState {
            ERR_clear_error()
            let result = SSL_do_handshake(ssl)
            if result == 1 { return .complete }
            switch SSL_get_error(ssl, result) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .inProgress
            default: return .failed(TestingError("handshake").description)
            }
        }

        /// What a read found.
        public enum ReadResult: Equatable, Sendable {
            /// Decrypted application data.
            case bytes([UInt8])
            /// No complete record yet: more bytes from the client are needed.
            case wantsMore
            /// The client closed the session with `close_notify`.
            case closeNotify
            /// The session failed, with OpenSSL's reasons.
            case failed(String)
        }

        /// Decrypts what arrived (up to 64 KiB).
        public func read() -> ReadResult {
            ERR_clear_error()
            var buffer = [UInt8](repeating: 0, count: 65_536)
            let count = buffer.withUnsafeMutableBytes { SSL_read(ssl, $0.baseAddress, Int32($0.count)) }
            if count > 0 { return .bytes(Array(buffer.prefix(Int(count)))) }
            switch SSL_get_error(ssl, count) {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: return .wantsMore
            case SSL_ERROR_ZERO_RETURN: return .closeNotify
            default: return .failed(TestingError("read").description)
            }
        }

        /// Encrypts `bytes` for the client (in ``takeOutput()``).
        public func write(_ bytes: [UInt8]) {
            guard !bytes.isEmpty else { return }
            _ = bytes.withUnsafeBytes { SSL_write(ssl, $0.baseAddress, Int32($0.count)) }
        }

        /// Queues close_notify.
        public func shutdown() { _ = SSL_shutdown(ssl) }

        /// Asks for a TLS 1.3 key update, and for the client's in return.
        public func requestKeyUpdate() { _ = SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) }

        /// The subject of the certificate the client sent, if any.
        public var clientCertificateSubject: String? {
            guard let peer = SSL_get1_peer_certificate(ssl) else { return nil }
            return (try? Certificate(derEncoded: OwnedX509(takingOwnership: peer).der))?.subject.description
        }

        /// True when the client resumed an earlier session.
        public var sessionReused: Bool { SSL_session_reused(ssl) == 1 }

        /// The name the client sent with SNI.
        public var serverName: String? {
            SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) }
        }

        /// The protocol version agreed on, e.g. "TLSv1.3".
        public var protocolVersion: String { String(cString: SSL_get_version(ssl)) }
    }
}
