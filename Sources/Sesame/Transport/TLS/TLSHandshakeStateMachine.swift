/// The decisions a client handshake waits for, as a value-type state machine.
///
/// OpenSSL calls the verify and client-certificate callbacks twice: once to learn that a decision
/// is needed (the handshake then suspends with `SSL_ERROR_WANT_RETRY_VERIFY` or
/// `SSL_ERROR_WANT_X509_LOOKUP`) and once more after it was made. A resumed session skips the
/// verify callback altogether; the machine then asks for the decision on the stored chain before the
/// connection may carry a byte. No I/O happens here: events in, actions out.
struct TLSHandshakeStateMachine {
    enum DecisionState<Value> {
        case notRequested
        case awaiting(asked: Bool)
        case decided(Value)
    }

    private(set) var trust: DecisionState<Bool> = .notRequested
    private(set) var identity: DecisionState<Identity?> = .notRequested
    private(set) var peerChain: [Certificate] = []
    private(set) var acceptableIssuers: [DistinguishedName] = []
    private(set) var isComplete = false

    /// True once the server asked for a client certificate.
    var clientCertificateRequested: Bool {
        if case .notRequested = identity { return false }
        return true
    }

    /// True once a certificate request was answered (with an identity or with none).
    var identityAnswered: Bool {
        if case .decided = identity { return true }
        return false
    }

    /// The identity that was sent, if any.
    var sentIdentity: Identity? {
        if case .decided(let identity) = identity { return identity }
        return nil
    }

    /// True when the trust decision was a rejection.
    var trustRejected: Bool {
        if case .decided(false) = trust { return true }
        return false
    }

    // MARK: Callback events (inside OpenSSL; answers are C return codes)

    enum VerifyAnswer: Equatable {
        case suspend
        case accept
        case reject
    }

    mutating func verifyCallback(chain: @autoclosure () -> [Certificate]) -> VerifyAnswer {
        switch trust {
        case .notRequested:
            peerChain = chain()
            trust = .awaiting(asked: false)
            return .suspend
        case .awaiting:
            return .suspend
        case .decided(let accepted):
            return accepted ? .accept : .reject
        }
    }

    enum ClientCertificateAnswer {
        case suspend
        case send(Identity)
        case sendNone
    }

    mutating func clientCertificateCallback(issuers: @autoclosure () -> [DistinguishedName]) -> ClientCertificateAnswer
    {
        switch identity {
        case .notRequested:
            acceptableIssuers = issuers()
            identity = .awaiting(asked: false)
            return .suspend
        case .awaiting:
            return .suspend
        case .decided(let chosen):
            return chosen.map(ClientCertificateAnswer.send) ?? .sendNone
        }
    }

    // MARK: Driver events (on the loop, after SSL_connect returned)

    enum Step: Equatable {
        /// Ask for a trust decision on ``peerChain``.
        case askTrust(resumed: Bool)
        /// Ask for a client identity for ``acceptableIssuers``.
        case askIdentity
        /// A decision is already being asked for; wait.
        case waitForDecision
        /// Waiting on the network.
        case waitForNetwork
        /// Handshake done and every decision made: the connection may carry data.
        case established
        /// Handshake finished but the trust decision said no.
        case rejected
    }

    /// `SSL_connect` wants a trust decision (`SSL_ERROR_WANT_RETRY_VERIFY`).
    mutating func wantsRetryVerify() -> Step {
        guard case .awaiting(let asked) = trust else { return .waitForNetwork }
        if asked { return .waitForDecision }
        trust = .awaiting(asked: true)
        return .askTrust(resumed: false)
    }

    /// `SSL_connect` wants a client identity (`SSL_ERROR_WANT_X509_LOOKUP`).
    mutating func wantsClientIdentity() -> Step {
        guard case .awaiting(let asked) = identity else { return .waitForNetwork }
        if asked { return .waitForDecision }
        identity = .awaiting(asked: true)
        return .askIdentity
    }

    /// `SSL_connect` returned 1. On a resumed session no decision was made yet: ask on the stored chain.
    mutating func handshakeFinished(resumed: Bool, storedChain: @autoclosure () -> [Certificate]) -> Step {
        switch trust {
        case .notRequested:
            // Only a resumed session gets here: OpenSSL skipped verification. Never skip the decision.
            peerChain = storedChain()
            trust = .awaiting(asked: true)
            return .askTrust(resumed: true)
        case .awaiting:
            return .waitForDecision
        case .decided(let accepted):
            guard accepted else { return .rejected }
            isComplete = true
            return .established
        }
    }

    mutating func trustDecided(_ accepted: Bool) {
        trust = .decided(accepted)
    }

    mutating func identityDecided(_ chosen: Identity?) {
        identity = .decided(chosen)
    }
}
