import FoundationEssentials
import Sesame

/// A scripted Bearer protection (RFC 6750) for ``LocalServer`` handlers, with the token issuer a
/// test's `TokenAuthenticator` calls: one token is valid at a time; ``issue()`` makes a new one,
/// ``expire()`` ends the current one as its lifetime would.
///
/// A request without a token gets 401 with `WWW-Authenticate: Bearer realm="…"`; one with a token
/// that is not the current one gets the same challenge with `error="invalid_token"`.
///
/// ```swift
/// let gate = BearerTokenGate(realm: "api")
/// configuration.handler = { request in gate.check(request) ?? .text("hello") }
/// ```
public final class BearerTokenGate: Sendable {
    private struct State {
        var current: String?
        var issued = 0
        var refused = 0
        var accepted = 0
    }

    /// The realm of the challenge.
    public let realm: String
    private let state = LockedValue(State())

    /// A gate for `realm` with no valid token until ``issue()`` makes one.
    public init(realm: String) {
        self.realm = realm
    }

    /// Makes a new token the only valid one and returns it.
    @discardableResult
    public func issue() -> String {
        state.withLock { state in
            state.issued += 1
            let token = "token-\(state.issued)-" + UUID().uuidString.lowercased()
            state.current = token
            return token
        }
    }

    /// Ends the current token: requests carrying it are refused with `invalid_token`.
    public func expire() {
        state.withLock { $0.current = nil }
    }

    /// How many tokens ``issue()`` made.
    public var issuedCount: Int { state.withLock { $0.issued } }
    /// How many requests were refused.
    public var refusedCount: Int { state.withLock { $0.refused } }
    /// How many requests were let through.
    public var acceptedCount: Int { state.withLock { $0.accepted } }

    /// The Bearer token `request` carries, if any.
    public func token(_ request: LocalServer.Request) -> String? {
        guard let header = request.headers["authorization"], header.lowercased().hasPrefix("bearer ") else {
            return nil
        }
        return String(header.dropFirst(7)).trimmingWhitespace()
    }

    /// nil when `request` carries the current token; otherwise the 401 to send.
    public func check(_ request: LocalServer.Request) -> LocalServer.Response? {
        let token = token(request)
        let valid = state.withLock { state -> Bool in
            let valid = token != nil && token == state.current
            if valid { state.accepted += 1 } else { state.refused += 1 }
            return valid
        }
        if valid { return nil }
        var challenge = "Bearer realm=\"\(realm)\""
        if token != nil { challenge += ", error=\"invalid_token\", error_description=\"the token is not valid\"" }
        return .text("unauthorized", status: 401, headers: [("WWW-Authenticate", challenge)])
    }
}
