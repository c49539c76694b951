@testable import Sesame

/// The resolver's tests drive it as the session does: each `.lookUpCredential` step is answered
/// with what `automatic` finds, so a test states where credentials come from in one closure.
extension ChallengeResolver {
    typealias Automatic = @Sendable (ProtectionSpace) throws -> (Credential, ChallengeTrace.Responder)?

    mutating func received(
        _ response: HTTPResponse,
        challenged: Bool,
        offers: [ChallengeOffer],
        automatic: Automatic
    ) throws -> Step {
        try lookingUp(received(response, challenged: challenged, offers: offers), automatic)
    }

    mutating func answered(
        _ disposition: AuthChallengeDisposition,
        _ credential: Credential?,
        by responder: ChallengeTrace.Responder,
        for challenge: AuthenticationChallenge,
        automatic: Automatic
    ) throws -> Step {
        try lookingUp(answered(disposition, credential, by: responder, for: challenge), automatic)
    }

    private mutating func lookingUp(_ step: Step, _ automatic: Automatic) throws -> Step {
        var step = step
        while case .lookUpCredential(let space) = step { step = credentialFound(try automatic(space)) }
        return step
    }
}
