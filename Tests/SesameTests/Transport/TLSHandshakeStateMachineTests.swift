import Testing

@testable import Sesame

@Suite struct TLSHandshakeStateMachineTests {
    let chain = [sharedPKI.root.certificate]

    @Test func aFullHandshakeSuspendsOnceAndAsksOnce() {
        var machine = TLSHandshakeStateMachine()
        #expect(machine.verifyCallback(chain: chain) == .suspend)
        #expect(machine.wantsRetryVerify() == .askTrust(resumed: false))
        // Until the answer comes, repeated wake-ups do not ask again.
        #expect(machine.verifyCallback(chain: chain) == .suspend)
        #expect(machine.wantsRetryVerify() == .waitForDecision)
        machine.trustDecided(true)
        #expect(machine.verifyCallback(chain: chain) == .accept)
        #expect(machine.handshakeFinished(resumed: false, storedChain: []) == .established)
        #expect(machine.isComplete)
    }

    @Test func aRejectionIsReportedToOpenSSLAndNeverEstablishes() {
        var machine = TLSHandshakeStateMachine()
        _ = machine.verifyCallback(chain: chain)
        _ = machine.wantsRetryVerify()
        machine.trustDecided(false)
        #expect(machine.verifyCallback(chain: chain) == .reject)
        #expect(machine.trustRejected)
        #expect(machine.handshakeFinished(resumed: false, storedChain: []) == .rejected)
    }

    @Test func aResumedSessionIsAskedOnItsStoredChainBeforeItIsEstablished() {
        var machine = TLSHandshakeStateMachine()
        #expect(machine.handshakeFinished(resumed: true, storedChain: chain) == .askTrust(resumed: true))
        #expect(machine.peerChain == chain)
        #expect(machine.handshakeFinished(resumed: true, storedChain: chain) == .waitForDecision)
        machine.trustDecided(false)
        #expect(machine.handshakeFinished(resumed: true, storedChain: chain) == .rejected)
    }

    @Test func clientCertificateDecisionsFollowTheSamePattern() throws {
        var machine = TLSHandshakeStateMachine()
        let names = [sharedPKI.clientCA.certificate.subject]
        guard case .suspend = machine.clientCertificateCallback(issuers: names) else {
            Issue.record("expected suspend")
            return
        }
        #expect(machine.acceptableIssuers == names)
        #expect(machine.wantsClientIdentity() == .askIdentity)
        #expect(machine.wantsClientIdentity() == .waitForDecision)
        #expect(machine.clientCertificateRequested)
        let identity = try sharedPKI.clientCertificate().identity()
        machine.identityDecided(identity)
        guard case .send(let sent) = machine.clientCertificateCallback(issuers: []) else {
            Issue.record("expected send")
            return
        }
        #expect(sent == identity)
        #expect(machine.sentIdentity == identity)
    }

    @Test func decliningToSendACertificateSendsNone() {
        var machine = TLSHandshakeStateMachine()
        _ = machine.clientCertificateCallback(issuers: [])
        _ = machine.wantsClientIdentity()
        machine.identityDecided(nil)
        guard case .sendNone = machine.clientCertificateCallback(issuers: []) else {
            Issue.record("expected sendNone")
            return
        }
        #expect(machine.sentIdentity == nil)
    }
}
