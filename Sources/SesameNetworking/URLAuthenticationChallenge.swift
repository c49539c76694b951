import Foundation
import Sesame

/// The answering side of a challenge (`URLAuthenticationChallengeSender`), for code that answers
/// through `challenge.sender` as NSURLConnection's delegates do. With URLSession, the first
/// answer counts, whether it came through the sender or the completion handler.
public protocol URLAuthenticationChallengeSender: NSObjectProtocol {
    /// Answers the challenge with `credential`.
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge)
    /// Goes on without a credential: the 401 or 407 becomes the response.
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge)
    /// Cancels the challenge: the load fails with `NSURLErrorUserCancelledAuthentication`.
    func cancel(_ challenge: URLAuthenticationChallenge)
    /// Lets the system answer as if no delegate were there (Apple declares it optional).
    func performDefaultHandling(for challenge: URLAuthenticationChallenge)
    /// Refuses this protection space and lets the next challenge of the response be tried (Apple
    /// declares it optional).
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge)
}

/// One of the sender's methods Apple declares optional, as a value: Swift on Linux has no optional
/// protocol requirements, so `sender.performDefaultHandling!(for: challenge)` and
/// `sender.rejectProtectionSpaceAndContinue?(with: challenge)`, as Apple code spells them, call
/// through this (always present, since every sender here implements both).
public struct URLAuthenticationChallengeSenderCall {
    let body: (URLAuthenticationChallenge) -> Void

    /// Calls the method for `challenge` (`performDefaultHandling!(for:)`).
    public func callAsFunction(for challenge: URLAuthenticationChallenge) { body(challenge) }
    /// Calls the method with `challenge` (`rejectProtectionSpaceAndContinue!(with:)`).
    public func callAsFunction(with challenge: URLAuthenticationChallenge) { body(challenge) }
}

extension URLAuthenticationChallengeSender {
    /// `performDefaultHandling(for:)` as Apple's optional method, for `sender.performDefaultHandling!(for:)`.
    public var performDefaultHandling: URLAuthenticationChallengeSenderCall? {
        URLAuthenticationChallengeSenderCall { [self] in self.performDefaultHandling(for: $0) }
    }

    /// `rejectProtectionSpaceAndContinue(with:)` as Apple's optional method, for
    /// `sender.rejectProtectionSpaceAndContinue!(with:)`.
    public var rejectProtectionSpaceAndContinue: URLAuthenticationChallengeSenderCall? {
        URLAuthenticationChallengeSenderCall { [self] in self.rejectProtectionSpaceAndContinue(with: $0) }
    }

    /// Forwards to the sender of the challenge underneath, for senders that do not implement it.
    public func performDefaultHandling(for challenge: URLAuthenticationChallenge) {
        challenge.challenge.sender?.performDefaultHandling(for: challenge.challenge)
    }
    /// Forwards to the sender of the challenge underneath, for senders that do not implement it.
    public func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {
        challenge.challenge.sender?.rejectProtectionSpaceAndContinue(with: challenge.challenge)
    }
}

/// A server's, proxy's or handshake's demand for a credential (`URLAuthenticationChallenge`).
open class URLAuthenticationChallenge: NSObject, @unchecked Sendable {
    // @unchecked: immutable but for `defaults`, which is behind a lock.
    let challenge: AuthenticationChallenge
    /// Who asks and how: host, port, realm and authentication method.
    public let protectionSpace: URLProtectionSpace
    /// The credential that would be used without asking (from the URL, the storage or `.netrc`), or
    /// the one that just failed; nil when there is none.
    public let proposedCredential: URLCredential?
    /// The 401 or 407 response that carried the challenge; nil for a connection-level challenge.
    public let failureResponse: URLResponse?
    /// Why the last attempt failed, if the failure had an error.
    public let error: (any Error)?
    private let answerSender: any URLAuthenticationChallengeSender
    /// The forms of the method just called that the delegate does not implement (Sesame's
    /// defaults mark them): with both missing, the method is missing.
    package enum Form: Sendable {
        case handler
        case async
    }
    private let lock = NSLock()
    private var missing: Set<Form> = []

    init(_ challenge: AuthenticationChallenge, sender: (any URLAuthenticationChallengeSender & Sendable)? = nil) {
        self.challenge = challenge
        protectionSpace = URLProtectionSpace(challenge.protectionSpace)
        proposedCredential = challenge.proposedCredential.map(URLCredential.init)
        failureResponse = challenge.failureResponse.map(HTTPURLResponse.make)
        error = challenge.error
        answerSender = sender ?? ChallengeSender()
    }

    /// A challenge a `URLProtocol` (or a test) makes itself, answered through `sender`.
    public init(
        protectionSpace space: URLProtectionSpace,
        proposedCredential credential: URLCredential?,
        previousFailureCount: Int,
        failureResponse response: URLResponse?,
        error: (any Error)?,
        sender: any URLAuthenticationChallengeSender
    ) {
        challenge = AuthenticationChallenge(
            protectionSpace: space.space,
            proposedCredential: credential?.sesame,
            previousFailureCount: previousFailureCount,
            error: error
        )
        protectionSpace = space
        proposedCredential = credential
        failureResponse = response
        self.error = error
        answerSender = sender
    }

    /// A copy of `challenge` answered through `sender` (a protocol passing on a challenge).
    public convenience init(
        authenticationChallenge challenge: URLAuthenticationChallenge,
        sender: any URLAuthenticationChallengeSender
    ) {
        self.init(
            protectionSpace: challenge.protectionSpace,
            proposedCredential: challenge.proposedCredential,
            previousFailureCount: challenge.previousFailureCount,
            failureResponse: challenge.failureResponse,
            error: challenge.error,
            sender: sender
        )
    }

    /// How many answers to this space have failed so far (0 on the first challenge).
    public var previousFailureCount: Int { challenge.previousFailureCount }
    /// The sender to answer through; with URLSession, answering through the completion handler is
    /// the same.
    public var sender: (any URLAuthenticationChallengeSender)? { answerSender }

    package func markMissing(_ form: Form) { lock.withLock { _ = missing.insert(form) } }
    func isMissing(_ form: Form) -> Bool { lock.withLock { missing.contains(form) } }
    /// Forgets the marks before the next delegate is asked.
    func clearMissing() { lock.withLock { missing = [] } }
}

/// The sender attached to every challenge: it answers the Sesame challenge underneath.
final class ChallengeSender: NSObject, URLAuthenticationChallengeSender, @unchecked Sendable {
    // @unchecked: stateless.
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {
        challenge.challenge.sender?.use(credential.sesame, for: challenge.challenge)
    }
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) {
        challenge.challenge.sender?.continueWithoutCredential(for: challenge.challenge)
    }
    func cancel(_ challenge: URLAuthenticationChallenge) {
        challenge.challenge.sender?.cancel(challenge.challenge)
    }
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) {
        challenge.challenge.sender?.performDefaultHandling(for: challenge.challenge)
    }
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) {
        challenge.challenge.sender?.rejectProtectionSpaceAndContinue(with: challenge.challenge)
    }
}
