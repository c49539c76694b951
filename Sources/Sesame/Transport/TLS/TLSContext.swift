internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Glibc

/// Owns one client `SSL_CTX` with Sesame's callbacks installed, and the caches that go with it.
/// One context exists per distinct ``TLSConfiguration/contextKey`` and is shared by every
/// connection made with it. Immutable after creation, apart from the locked caches.
///
/// Contexts that differ only in the ALPN protocols they offer share their session cache and
/// their trust evaluations: the first connection to an origin offers `h2, http/1.1`, the origin's
/// further HTTP/1.1 connections offer `http/1.1` only, and they resume the first one's session.
/// ALPN does not bind a session (RFC 8446 section 4.6.1; only early data, which Sesame does not
/// send, must keep the protocol), whereas the versions and the trust roots do: a session trusted
/// under one set of roots never reaches a context with another.
final class TLSContext: @unchecked Sendable {
    let pointer: OpaquePointer
    let key: TLSConfiguration.ContextKey
    let sessions: TLSSessionCache
    /// Default trust evaluations under this context's roots.
    let trustEvaluations: TrustEvaluationCache

    private static let contexts = LockedValue<[TLSConfiguration.ContextKey: TLSContext]>([:])

    /// The shared context for `configuration`.
    static func shared(for configuration: TLSConfiguration) throws -> TLSContext {
        let key = configuration.contextKey
        if let existing = contexts.withLock({ $0[key] }) { return existing }
        let sibling = contexts.withLock { contexts in
            contexts.first { $0.key.resumptionScope == key.resumptionScope }?.value
        }
        let made = try TLSContext(
            key: key,
            sessions: sibling?.sessions ?? TLSSessionCache(),
            trustEvaluations: sibling?.trustEvaluations ?? TrustEvaluationCache()
        )
        return contexts.withLock { contexts in
            if let existing = contexts[key] { return existing }
            if contexts.count >= 32 { contexts.removeAll() }
            contexts[key] = made
            return made
        }
    }

    private init(
        key: TLSConfiguration.ContextKey,
        sessions: TLSSessionCache,
        trustEvaluations: TrustEvaluationCache
    ) throws {
        self.key = key
        self.sessions = sessions
        self.trustEvaluations = trustEvaluations
        OpenSSLErrorStack.clear()
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw SesameError(.tlsHandshakeFailed, "SSL_CTX_new failed (\(OpenSSLErrorStack.drain()))")
        }
        pointer = context
        _ = CSesameShims_SSL_CTX_set_min_proto_version(context, Int32(key.minimumVersion.rawValue))
        _ = CSesameShims_SSL_CTX_set_max_proto_version(context, Int32(key.maximumVersion?.rawValue ?? 0))
        _ = CSesameShims_SSL_CTX_set_options(context, CSesameShims_SSL_OP_defaults())
        _ = CSesameShims_SSL_CTX_set_mode(context, CSesameShims_SSL_MODE_defaults())
        // SSL_VERIFY_PEER is essential: with SSL_VERIFY_NONE a rejection from the callback is ignored.
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        SSL_CTX_set_cert_verify_callback(context, TLSCallbacks.verify, nil)
        SSL_CTX_set_client_cert_cb(context, TLSCallbacks.clientCertificate)
        _ = CSesameShims_SSL_CTX_set_session_cache_mode(context, Int(CSesameShims_SSL_SESS_CACHE_client_external()))
        SSL_CTX_sess_set_new_cb(context, TLSCallbacks.newSession)
        if !key.applicationProtocols.isEmpty {
            let wire = try Self.alpnWireFormat(key.applicationProtocols)
            _ = wire.withUnsafeBufferPointer { SSL_CTX_set_alpn_protos(context, $0.baseAddress, UInt32($0.count)) }
        }
    }

    deinit { SSL_CTX_free(pointer) }

    static func alpnWireFormat(_ protocols: [String]) throws -> [UInt8] {
        var wire: [UInt8] = []
        for name in protocols {
            let bytes = Array(name.utf8)
            guard (1...255).contains(bytes.count) else {
                throw SesameError(.invalidArgument, "ALPN protocol name '\(name)' must be 1 to 255 bytes")
            }
            wire.append(UInt8(bytes.count))
            wire.append(contentsOf: bytes)
        }
        return wire
    }
}

/// Owns an `SSL_SESSION` reference.
final class TLSSessionBox: @unchecked Sendable {
    // @unchecked: immutable; SSL_SESSION is reference counted and may be set on several SSLs.
    let pointer: OpaquePointer
    init(takingOwnership pointer: OpaquePointer) { self.pointer = pointer }
    deinit { SSL_SESSION_free(pointer) }
}

/// Client sessions for resumption, by "host:port". Sessions that involved a client certificate are
/// never stored, so resumption can never carry one identity's session into another's connection.
final class TLSSessionCache: Sendable {
    private let sessions = LockedValue<[String: TLSSessionBox]>([:])
    private let limit = 256

    func session(for key: String) -> TLSSessionBox? { sessions.withLock { $0[key] } }

    func store(_ session: TLSSessionBox, for key: String) {
        sessions.withLock { sessions in
            if sessions.count >= limit, sessions[key] == nil { sessions.removeAll() }
            sessions[key] = session
        }
    }

    /// Forgets the session for `key` (its server failed a check after the handshake).
    func remove(for key: String) {
        _ = sessions.withLock { $0.removeValue(forKey: key) }
    }

}
