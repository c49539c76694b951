internal import COpenSSL
internal import CSesameShims
import Foundation

extension Connection {
    // MARK: Called from the C trampolines (inside SSL calls on the loop)

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
        guard let context else { return false }
        context.sessions.store(TLSSessionBox(takingOwnership: session), for: sessionKey)
        return true
    }

    // MARK: Driving the handshake

    func driveHandshake() {
        guard phase == .handshaking, let ssl else { return }
        OpenSSLErrorStack.clear()
        let result = SSL_connect(ssl)
        flushOutbound()
        guard phase == .handshaking else { return }  // the flush may have failed the connection
        let step: TLSHandshakeStateMachine.Step
        if result == 1 {
            step = machine.handshakeFinished(resumed: SSL_session_reused(ssl) == 1, storedChain: storedPeerChain(ssl))
        } else {
            let code = SSL_get_error(ssl, result)
            switch code {
            case SSL_ERROR_WANT_READ, SSL_ERROR_WANT_WRITE:
                step = .waitForNetwork
            case SSL_ERROR_WANT_RETRY_VERIFY:
                step = machine.wantsRetryVerify()
            case SSL_ERROR_WANT_X509_LOOKUP:
                step = machine.wantsClientIdentity()
            default:
                fail(mapTLSError(code, OpenSSLErrorStack.drain(), during: "handshake"))
                return
            }
        }
        perform(step)
    }

    private func perform(_ step: TLSHandshakeStateMachine.Step) {
        switch step {
        case .waitForNetwork:
            if socketEOF {
                fail(
                    socketError
                        ?? SesameError(
                            .connectionClosed,
                            "\(tlsHost):\(tlsPort) closed the connection during the TLS handshake"
                        )
                )
            }
        case .waitForDecision:
            break
        case .askTrust(let resumed):
            askTrust(resumed: resumed)
        case .askIdentity:
            askIdentity()
        case .established:
            established()
        case .rejected:
            fail(trustRejectedError())
        }
    }

    private func askTrust(resumed: Bool) {
        let request = ServerTrust(
            host: tlsHost,
            port: tlsPort,
            peerChain: machine.peerChain,
            isResumedSession: resumed,
            trustRoots: configuration.trustRoots
        )
        let hook: (@Sendable (ServerTrust) async throws -> Bool?)
        if let explicit = hooks.serverTrust {
            hook = { try await explicit($0) }
        } else if let delegateTrust = hooks.delegateTrust {
            hook = delegateTrust
        } else {
            return trustByDefault(request)
        }
        suspendForDecision()
        let loop = self.loop
        Task {
            do {
                let accepted = try await hook(request)
                loop.execute {
                    guard let accepted else { return self.trustByDefault(request) }
                    self.trustDecided(accepted, evaluation: nil)
                }
            } catch {
                loop.execute { self.abandonHandshake(error) }
            }
        }
    }

    /// Default handling needs no suspension: evaluate right here on the loop (or reuse a recent
    /// evaluation of the same chain for the same host).
    private func trustByDefault(_ request: ServerTrust) {
        let evaluation = context?.trustEvaluations.evaluate(request) ?? request.evaluate()
        trustDecided(evaluation.isTrusted, evaluation: evaluation)
    }

    private func askIdentity() {
        guard let hook = hooks.clientCertificate else {
            identityDecided(nil)
            return
        }
        let request = ClientCertificateRequest(
            host: tlsHost,
            port: tlsPort,
            acceptableIssuers: machine.acceptableIssuers
        )
        suspendForDecision()
        let loop = self.loop
        Task {
            do {
                let identity = try await hook(request)
                loop.execute { self.identityDecided(identity) }
            } catch {
                loop.execute { self.abandonHandshake(error) }
            }
        }
    }

    /// A hook gave up (a delegate cancelled the challenge): the handshake ends with its error.
    private func abandonHandshake(_ error: any Error) {
        guard phase == .handshaking else { return }
        fail(error as? SesameError ?? SesameError(.tlsHandshakeFailed, "the handshake was abandoned: \(error)"))
    }

    /// Stops polling the socket and stops the handshake clock while a delegate decides.
    private func suspendForDecision() {
        awaitingDecision = true
        cancelHandshakeTimer()
        updateInterest()
    }

    private func resumeAfterDecision() {
        if awaitingDecision {
            awaitingDecision = false
            armHandshakeTimer()
        }
        driveHandshake()
        updateInterest()
    }

    func trustDecided(_ accepted: Bool, evaluation: TrustEvaluationResult?) {
        guard phase == .handshaking else { return }
        machine.trustDecided(accepted)
        lastEvaluation = evaluation
        resumeAfterDecision()
    }

    func identityDecided(_ identity: Identity?) {
        guard phase == .handshaking, let ssl else { return }
        if let identity {
            // Installed here, outside the callback, so the chain lands in the identity's key slot;
            // the retried callback then hands OpenSSL the same certificate and key.
            OpenSSLErrorStack.clear()
            guard SSL_use_certificate(ssl, identity.certificate.box.pointer) == 1,
                SSL_use_PrivateKey(ssl, identity.privateKey.pointer) == 1
            else {
                fail(
                    SesameError(
                        .clientCertificateRejected,
                        "the client identity could not be used (\(OpenSSLErrorStack.drain()))"
                    )
                )
                return
            }
            for intermediate in identity.intermediates {
                _ = CSesameShims_SSL_add1_chain_cert(ssl, intermediate.box.pointer)
            }
        }
        machine.identityDecided(identity)
        resumeAfterDecision()
    }

    private func established() {
        guard let ssl else { return }
        let stapled: OCSPStatus?
        do {
            stapled = try checkStapledOCSP(ssl)
        } catch {
            context?.sessions.remove(for: sessionKey)
            fail(error)
            return
        }
        cancelHandshakeTimer()
        cancelEstablishTimer()
        phase = .established
        var alpn: UnsafePointer<UInt8>? = nil
        var alpnLength: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &alpn, &alpnLength)
        let applicationProtocol = alpn.map {
            String(decoding: UnsafeBufferPointer(start: $0, count: Int(alpnLength)), as: UTF8.self)
        }
        let cipher =
            SSL_get_current_cipher(ssl).flatMap { SSL_CIPHER_standard_name($0) }.map { String(cString: $0) }
            ?? "unknown"
        var info =
            TLSConnectionInfo(
                protocolVersion: String(cString: SSL_get_version(ssl)),
                cipherSuite: cipher,
                applicationProtocol: applicationProtocol,
                peerChain: machine.peerChain,
                isSessionReused: SSL_session_reused(ssl) == 1,
                clientCertificate: machine.sentIdentity?.certificate,
                remoteAddress: remoteAddressDescription,
                trustEvaluation: lastEvaluation
            )
        info.stapledOCSPStatus = stapled
        publish(info)
        if let continuation = connectContinuation {
            connectContinuation = nil
            continuation.resume()
        }
    }

    /// Checks the OCSP response the server stapled (see ``StapledOCSPPolicy``). A resumed session
    /// carries no staple; it was stored only after its full handshake passed this check.
    private func checkStapledOCSP(_ ssl: OpaquePointer) throws(SesameError) -> OCSPStatus? {
        guard configuration.stapledOCSP != .ignore, SSL_session_reused(ssl) != 1,
            let leaf = machine.peerChain.first
        else { return nil }
        var bytes: UnsafePointer<UInt8>? = nil
        let length = CSesameShims_SSL_get_tlsext_status_ocsp_resp(ssl, &bytes)
        guard length > 0, let bytes else {
            if configuration.stapledOCSP == .require || leaf.requiresOCSPStaple {
                let why =
                    leaf.requiresOCSPStaple ? "its certificate is marked must-staple" : "the configuration requires one"
                throw SesameError(
                    .serverTrustRejected,
                    "\(tlsHost):\(tlsPort): the server stapled no OCSP response, and \(why)"
                )
            }
            return nil
        }
        let response = Data(bytes: bytes, count: length)
        let chain = lastEvaluation.flatMap { $0.verifiedChain.isEmpty ? nil : $0.verifiedChain } ?? machine.peerChain
        let store: X509StoreBox
        do {
            store = try configuration.trustRoots.store()
        } catch {
            throw SesameError(
                .serverTrustRejected,
                "\(tlsHost):\(tlsPort): the OCSP staple cannot be checked: \(error)"
            )
        }
        let outcome = OCSPResponseCheck.evaluate(responses: [response], chain: chain, store: store, at: nil)
        guard outcome.failures.isEmpty else {
            let reasons = outcome.failures.map(\.description).joined(separator: "; ")
            throw SesameError(.serverTrustRejected, "\(tlsHost):\(tlsPort): stapled OCSP response: \(reasons)")
        }
        return outcome.status
    }

    /// The chain stored with the (resumed) session, leaf first.
    private func storedPeerChain(_ ssl: OpaquePointer) -> [Certificate] {
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

    func trustRejectedError() -> SesameError {
        let reasons = lastEvaluation.map { $0.failures.map(\.description).joined(separator: "; ") } ?? ""
        let detail = reasons.isEmpty ? "the trust decision rejected the server's certificate" : reasons
        return SesameError(.serverTrustRejected, "\(tlsHost):\(tlsPort): \(detail)")
    }
}
