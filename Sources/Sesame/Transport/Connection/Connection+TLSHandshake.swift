import FoundationEssentials
import Glibc

// Driving the TLS engine's handshake: sending what it produces, asking the hooks for its
// decisions (a Task each, answered on the loop), and the handshake clock.
extension Connection {
    func driveHandshake() {
        guard phase == .handshaking, let tls else { return }
        if carrier != nil { pumpCarrier() }
        let step = tls.handshake()
        flushOutbound()
        guard phase == .handshaking else { return }  // the flush may have failed the connection
        switch step {
        case .needsInput:
            if socketEOF {
                let ended =
                    socketError
                    ?? SesameError(
                        .connectionClosed,
                        "\(tls.serverName):\(tls.port) closed the connection during the TLS handshake"
                    )
                fail(tls.endedDuringHandshake(ended))
            }
        case .waitingForDecision:
            break
        case .decideTrust(let resumed):
            askTrust(tls.trustRequest(resumed: resumed), of: tls)
        case .decideIdentity:
            askIdentity(tls.identityRequest())
        case .established:
            established(tls)
        case .failed(let error):
            fail(error)
        }
    }

    private func askTrust(_ request: ServerTrust, of tls: TLSEngine) {
        let hook: (@Sendable (ServerTrust) async throws -> Bool?)
        if let explicit = hooks.serverTrust {
            hook = { try await explicit($0) }
        } else if let delegateTrust = hooks.delegateTrust {
            hook = delegateTrust
        } else {
            // Default handling needs no suspension: evaluated right here on the loop.
            let evaluation = tls.evaluateByDefault(request)
            return trustDecided(evaluation.isTrusted, evaluation: evaluation)
        }
        suspendForDecision()
        let loop = self.loop
        Task {
            do {
                let accepted = try await hook(request)
                loop.execute {
                    guard let accepted else {
                        guard let tls = self.tls else { return }
                        let evaluation = tls.evaluateByDefault(request)
                        return self.trustDecided(evaluation.isTrusted, evaluation: evaluation)
                    }
                    self.trustDecided(accepted, evaluation: nil)
                }
            } catch {
                loop.execute { self.abandonHandshake(error) }
            }
        }
    }

    private func askIdentity(_ request: ClientCertificateRequest) {
        guard let hook = hooks.clientCertificate else {
            identityDecided(nil)
            return
        }
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
        readState.decisionAsked()
        cancelHandshakeTimer()
        updateInterest()
    }

    private func resumeAfterDecision() {
        if readState == .awaitingDecision {
            readState.decisionAnswered()
            armHandshakeTimer()
        }
        driveHandshake()
        updateInterest()
    }

    func trustDecided(_ accepted: Bool, evaluation: TrustEvaluationResult?) {
        guard phase == .handshaking, let tls else { return }
        tls.decideTrust(accepted, evaluation: evaluation)
        resumeAfterDecision()
    }

    func identityDecided(_ identity: Identity?) {
        guard phase == .handshaking, let tls else { return }
        do {
            try tls.decideIdentity(identity)
        } catch {
            fail(error)
            return
        }
        resumeAfterDecision()
    }

    private func established(_ tls: TLSEngine) {
        cancelHandshakeTimer()
        cancelEstablishTimer()
        phase = .established
        readState = .idle
        publish(tls.connectionInfo(remoteAddress: remoteAddressDescription))
        if let continuation = connectContinuation {
            connectContinuation = nil
            continuation.resume()
        }
    }
}
