import FoundationEssentials
import Glibc

/// Supplies the Bearer tokens (RFC 6750) a session sends to the origins of a
/// ``BearerAuthentication``, and replaces one a server refuses.
///
/// The session asks ``currentToken()`` once, the first time it needs a token, then keeps the token
/// it was given or the last one ``refreshToken(rejecting:)`` returned. When a response says the
/// token is no longer good (``isTokenFailure(_:)``), the session calls ``refreshToken(rejecting:)``
/// once, however many requests got that answer, and sends each of them again with the new token.
/// A refresh that throws fails each waiting request once; a request is sent again after a refresh
/// at most once, so a server that refuses every token cannot keep a task going.
///
/// ```swift
/// struct Tokens: TokenAuthenticator {
///     let store: TokenStore  // the app's own: a keychain item, a file
///     func currentToken() async throws -> String? { try await store.accessToken() }
///     func refreshToken(rejecting rejected: String?) async throws -> String {
///         try await store.refresh()  // a POST to the token endpoint with the refresh token
///     }
/// }
/// ```
public protocol TokenAuthenticator: Sendable {
    /// The token to send before any has been refused; nil when there is none yet, in which case
    /// the session asks for a refresh before the first request.
    func currentToken() async throws -> String?

    /// A new token, to replace `rejected` (the token a server refused; nil when there was none).
    /// Called for one refresh at a time per session; the requests that wait for it are sent with
    /// what it returns, or fail with ``SesameError/Code/serverAuthenticationFailed`` naming what
    /// it threw.
    func refreshToken(rejecting rejected: String?) async throws -> String

    /// Whether `response`, a 401 to a request that carried a token, says that the token is no
    /// longer good, so that a new one may succeed.
    func isTokenFailure(_ response: HTTPResponse) -> Bool
}

extension TokenAuthenticator {
    /// RFC 6750's reading (section 3.1): a 401 whose `Bearer` challenge has `error="invalid_token"`
    /// or no error at all, or a 401 that names no challenge (as many APIs answer). A challenge with
    /// another error (`invalid_request`, `insufficient_scope`) and a 401 that offers only other
    /// schemes are not token failures: a new token would not help.
    public func isTokenFailure(_ response: HTTPResponse) -> Bool {
        BearerAuthentication.isTokenFailure(response)
    }
}

/// Where a session sends Bearer tokens, and who supplies them
/// (``SessionConfiguration/bearerAuthentication``).
///
/// A request to one of ``origins`` that carries no `Authorization` of its own is sent with
/// `Authorization: Bearer <token>`; a request to any other origin, a redirect to one included,
/// never carries the token.
public struct BearerAuthentication: Sendable {
    /// Supplies and refreshes the tokens.
    public let authenticator: any TokenAuthenticator
    /// The origins that receive the token, as `scheme://host[:port]`, lowercased, without a
    /// default port.
    public let origins: Set<String>
    let covered: Set<Origin>

    /// Tokens from `authenticator` for `origins`, each an `http` or `https` URL whose scheme, host
    /// and port name the origin (`https://api.example.test`).
    /// - Throws: ``SesameError/Code/invalidArgument`` for an entry that is not an absolute http or
    ///   https URL, or that has a user, a path other than `/`, a query or a fragment (a token is
    ///   given to a whole origin or to none of it).
    public init(origins: [String], authenticator: any TokenAuthenticator) throws {
        var covered = Set<Origin>()
        for text in origins {
            guard let url = URL(string: text), let origin = Origin(url), url.user == nil,
                url.path.isEmpty || url.path == "/", url.query == nil, url.fragment == nil
            else {
                throw SesameError(
                    .invalidArgument,
                    "'\(text)' is not an origin (scheme://host[:port]) to send Bearer tokens to"
                )
            }
            covered.insert(origin)
        }
        self.authenticator = authenticator
        self.covered = covered
        self.origins = Set(covered.map(\.description))
    }

    /// Whether requests to `origin` carry the token.
    func covers(_ origin: Origin) -> Bool {
        covered.contains(Origin(scheme: origin.scheme, host: origin.host, port: origin.port))
    }

    /// RFC 6750's reading of a refusal, the default of ``TokenAuthenticator/isTokenFailure(_:)``,
    /// for authenticators that refine it.
    public static func isTokenFailure(_ response: HTTPResponse) -> Bool {
        guard response.status == 401 else { return false }
        let fields = response.headers.values(for: "WWW-Authenticate")
        let challenges = fields.flatMap { AuthChallengeParser.parse($0).challenges }
        guard !challenges.isEmpty else { return true }
        return challenges.contains { challenge in
            guard challenge.scheme.caseInsensitiveEquals("Bearer") else { return false }
            guard let error = challenge.parameter("error") else { return true }
            return error == "invalid_token"
        }
    }

    /// `token` when it can go in a header field as it is: visible ASCII only, so that a token
    /// cannot end the field or add one.
    static func validated(_ token: String, from source: String) throws -> String {
        guard !token.isEmpty, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw SesameError(
                .serverAuthenticationFailed,
                "the token \(source) is empty or holds characters a header field cannot carry"
            )
        }
        return token
    }
}
