internal import COpenSSL
internal import CSesameShims
import FoundationEssentials

/// A client TLS session over byte buffers: the `SSL` with its BIOs, the handshake with its
/// suspensions for the trust and client-certificate decisions, and the records in both
/// directions. It does no I/O: ciphertext comes in through ``inboundSpace()``/``commitInbound(_:)``
/// or ``receive(_:)``, and goes out through ``drainOutput(into:)``. Whoever owns it (a socket's
/// connection, or another engine's plaintext for TLS inside TLS) moves the bytes.
///
/// Not thread-safe: its owner calls it from one thread at a time (a connection, on its loop).
/// OpenSSL's callbacks find the engine through the `SSL`'s ex_data (see ``TLSCallbacks``); they run
/// only inside the calls made here.
final class TLSEngine {
    /// The server the handshake is for (SNI, the trust decision, messages).
    let serverName: String
    let port: Int
    let configuration: TLSConfiguration
    let context: TLSContext
    /// Where a session for this server is kept for resumption.
    let sessionKey: String
    let objects: TLSObjects
    private(set) var machine = TLSHandshakeStateMachine()
    /// The default evaluation behind the trust decision, when Sesame made it.
    private(set) var lastEvaluation: TrustEvaluationResult?
    /// The stapled OCSP response's verdict, once the handshake is established.
    private(set) var stapledStatus: OCSPStatus?
    /// True once the handshake finished with every decision made and every check passed.
    private(set) var isEstablished = false

    var ssl: OpaquePointer { objects.ssl }

    /// A client session of `context` for `serverName`:`port`. `inboundCapacity` bounds the
    /// ciphertext held before OpenSSL reads it (at least one record's worth).
    init(
        context: TLSContext,
        configuration: TLSConfiguration,
        serverName: String,
        port: Int,
        inboundCapacity: Int = 65_536
    ) throws(SesameError) {
        self.context = context
        self.configuration = configuration
        self.serverName = serverName
        self.port = port
        // The staple policy binds a session as the trust roots do: one stored after a handshake
        // without a staple must not resume where a staple is required.
        self.sessionKey = "\(serverName.lowercased()):\(port) \(configuration.stapledOCSP)"
        objects = try TLSObjects(context: context, inboundCapacity: max(inboundCapacity, TLSEngine.largestRecord))
        let ssl = objects.ssl
        SSL_set_ex_data(ssl, TLSCallbacks.engineIndex, Unmanaged.passUnretained(self).toOpaque())
        SSL_set_connect_state(ssl)
        if let name = IPAddressText.dnsName(serverName) {  // SNI carries names only, never IP literals
            guard CSesameShims_SSL_set_tlsext_host_name(ssl, name) == 1 else {
                throw SesameError(.invalidArgument, "'\(serverName)' cannot be sent as a TLS server name")
            }
        }
        if configuration.stapledOCSP != .ignore { _ = CSesameShims_SSL_set_tlsext_status_type_ocsp(ssl) }
        if configuration.sessionResumption, let session = context.sessions.session(for: sessionKey) {
            SSL_set_session(ssl, session.pointer)
        }
    }

    /// The most a TLS record's ciphertext can hold (RFC 8446 section 5.2: 2^14 + 256).
    static let largestRecord = 16_384 + 256

    // MARK: Called from the C trampolines (inside SSL calls made here)

    func verifyCallback(chain: @autoclosure () -> [Certificate]) -> TLSHandshakeStateMachine.VerifyAnswer {
        machine.verifyCallback(chain: chain())
    }

    func clientCertificateCallback(
        issuers: @autoclosure () -> [DistinguishedName]
    ) -> TLSHandshakeStateMachine.ClientCertificateAnswer {
        machine.clientCertificateCallback(issuers: issuers())
    }

    /// A new session to resume later. Kept only when resumption is on, the server was trusted, and
    /// no client certificate was involved. Returns whether the reference was taken.
    func sessionArrived(_ session: OpaquePointer) -> Bool {
        guard configuration.sessionResumption, !machine.clientCertificateRequested,
            case .decided(true) = machine.trust
        else { return false }
        context.sessions.store(TLSSessionBox(takingOwnership: session), for: sessionKey)
        return true
    }

    // MARK: The handshake

    /// What the owner does next while the handshake runs.
    enum HandshakeStep {
        /// More ciphertext is needed (after sending what ``drainOutput(into:)`` gives).
        case needsInput
        /// Decide whether to trust ``ServerTrust`` (``trustRequest(resumed:)``), then call
        /// ``decideTrust(_:evaluation:)``.
        case decideTrust(resumed: Bool)
        /// Choose a client identity (``identityRequest()``), then call ``decideIdentity(_:)``.
        case decideIdentity
        /// A decision was asked for and has not come back.
        case waitingForDecision
        /// Every decision made and every check passed: the session may carry data.
        case established
        /// The handshake failed; the session is unusable.
        case failed(SesameError)
    }

    /// Runs the handshake as far as the bytes received and the decisions made allow.
    func handshake() -> HandshakeStep {
        guard !isEstablished else { return .established }
        OpenSSLErrorStack.clear()
        let result = SSL_connect(ssl)
        let step: TLSHandshakeStateMachine.Step
        if result == 1 {
            step = machine.handshakeFinished(resumed: SSL_session_reused(ssl) == 1, storedChain: storedPeerChain())
        } else {
            let code = SSL_get_error(ssl, result)
            switch code {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE: step = .waitForNetwork
            case SSL_ERROR_WANT_RETRY_VERIFY: step = machine.wantsRetryVerify()
            case SSL_ERROR_WANT_X509_LOOKUP: step = machine.wantsClientIdentity()
            default: return .failed(error(for: code, OpenSSLErrorStack.drain(), during: "handshake"))
            }
        }
        switch step {
        case .waitForNetwork: return .needsInput
        case .waitForDecision: return .waitingForDecision
        case .askTrust(let resumed): return .decideTrust(resumed: resumed)
        case .askIdentity: return .decideIdentity
        case .rejected: return .failed(trustRejectedError())
        case .established:
            do {
                stapledStatus = try checkStapledOCSP()
            } catch {
                context.sessions.remove(for: sessionKey)
                return .failed(error)
            }
            isEstablished = true
            return .established
        }
    }

    /// The trust question for ``HandshakeStep/decideTrust(resumed:)``.
    func trustRequest(resumed: Bool) -> ServerTrust {
        var trust = ServerTrust(
            host: serverName,
            port: port,
            peerChain: machine.peerChain,
            isResumedSession: resumed,
            trustRoots: configuration.trustRoots
        )
        trust.certificatePolicies = configuration.certificatePolicies
        return trust
    }

    /// Evaluates `request` by default (no delegate decides): on this thread, reusing a recent
    /// evaluation of the same chain for the same host.
    func evaluateByDefault(_ request: ServerTrust) -> TrustEvaluationResult {
        context.trustEvaluations.evaluate(request)
    }

    func decideTrust(_ accepted: Bool, evaluation: TrustEvaluationResult?) {
        machine.trustDecided(accepted)
        lastEvaluation = evaluation
    }

    /// The client-certificate question for ``HandshakeStep/decideIdentity``.
    func identityRequest() -> ClientCertificateRequest {
        ClientCertificateRequest(host: serverName, port: port, acceptableIssuers: machine.acceptableIssuers)
    }

    /// Sends `identity` (or no certificate) when the handshake goes on.
    /// - Throws: ``SesameError/Code/clientCertificateRejected`` when OpenSSL refuses the identity.
    func decideIdentity(_ identity: Identity?) throws(SesameError) {
        if let identity {
            // Installed here, outside the callback, so the chain lands in the identity's key slot;
            // the retried callback then hands OpenSSL the same certificate and key.
            OpenSSLErrorStack.clear()
            guard SSL_use_certificate(ssl, identity.certificate.box.pointer) == 1,
                SSL_use_PrivateKey(ssl, identity.privateKey.pointer) == 1
            else {
                throw SesameError(
                    .clientCertificateRejected,
                    "the client identity could not be used (\(OpenSSLErrorStack.drain()))"
                )
            }
            for intermediate in identity.intermediates {
                _ = CSesameShims_SSL_add1_chain_cert(ssl, intermediate.box.pointer)
            }
        }
        machine.identityDecided(identity)
    }

    /// Checks the OCSP response the server stapled (see ``StapledOCSPPolicy``). A resumed session
    /// carries no staple; it was stored only after its full handshake passed this check.
    func checkStapledOCSP() throws(SesameError) -> OCSPStatus? {
        guard configuration.stapledOCSP != .ignore, SSL_session_reused(ssl) != 1,
            let leaf = machine.peerChain.first
        else { return nil }
        let peer = "\(serverName):\(port)"
        var bytes: UnsafePointer<UInt8>? = nil
        let length = CSesameShims_SSL_get_tlsext_status_ocsp_resp(ssl, &bytes)
        guard length > 0, let bytes else {
            if configuration.stapledOCSP == .require || leaf.requiresOCSPStaple {
                let why =
                    leaf.requiresOCSPStaple ? "its certificate is marked must-staple" : "the configuration requires one"
                throw SesameError(.serverTrustRejected, "\(peer): the server stapled no OCSP response, and \(why)")
            }
            return nil
        }
        let response = Data(bytes: bytes, count: length)
        let chain = lastEvaluation.flatMap { $0.verifiedChain.isEmpty ? nil : $0.verifiedChain } ?? machine.peerChain
        let store: X509StoreBox
        do {
            store = try configuration.trustRoots.store()
        } catch {
            throw SesameError(.serverTrustRejected, "\(peer): the OCSP staple cannot be checked: \(error)")
        }
        let outcome = OCSPResponseCheck.evaluate(responses: [response], chain: chain, store: store, at: nil)
        guard outcome.failures.isEmpty else {
            let reasons = outcome.failures.map(\.description).joined(separator: "; ")
            throw SesameError(.serverTrustRejected, "\(peer): stapled OCSP response: \(reasons)")
        }
        return outcome.status
    }

    /// What the handshake agreed on, once ``isEstablished``.
    func connectionInfo(remoteAddress: String) -> TLSConnectionInfo {
        var alpn: UnsafePointer<UInt8>? = nil
        var alpnLength: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &alpn, &alpnLength)
        let applicationProtocol = alpn.map {
            String(decoding: UnsafeBufferPointer(start: $0, count: Int(alpnLength)), as: UTF8.self)
        }
        let cipher =
            SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_standard_name($0) }.map { String(cString: $0) }
            ?? "unknown"
        var info = TLSConnectionInfo(
            protocolVersion: String(cString: SSL_get_version(ssl)),
            cipherSuite: cipher,
            applicationProtocol: applicationProtocol,
            peerChain: machine.peerChain,
            isSessionReused: SSL_session_reused(ssl) == 1,
            clientCertificate: machine.sentIdentity?.certificate,
            remoteAddress: remoteAddress,
            trustEvaluation: lastEvaluation
        )
        info.stapledOCSPStatus = stapledStatus
        return info
    }

    /// The chain stored with the (resumed) session, leaf first.
    private func storedPeerChain() -> [Certificate] {
        var chain: [Certificate] = []
        if let stack = SSL_get_peer_cert_chain(ssl) {
            for index in 0..<CSesameShims_sk_X509_num(stack) {
                if let x509 = CSesameShims_sk_X509_value(stack, index) {
                    chain.append(Certificate(box: X509Box(borrowing: x509)))
                }
            }
        }
        if chain.isEmpty, let leaf = SSL_get1_peer_certificate(ssl) {
            chain.append(Certificate(box: X509Box(takingOwnership: leaf)))
        }
        return chain
    }
}
