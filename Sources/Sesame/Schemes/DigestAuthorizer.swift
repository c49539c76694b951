import FoundationEssentials
import Glibc

/// Computes `Authorization: Digest ...` values for one protection space and credential (RFC 7616),
/// request after request: the nonce count goes up by one each time, a `nextnonce` or a stale
/// challenge replaces the nonce, and the server's `rspauth` is checked.
///
/// A reference type shared by a task and the session's preemptive table, so requests that reuse a
/// nonce never repeat a nonce count.
final class DigestAuthorizer: Sendable {
    /// What a response's `rspauth` must equal, for the request it answers.
    struct Expectation: Sendable {
        let ha1: String
        let nonce: String
        let nc: String
        let cnonce: String
        let qop: String?
        let uri: String
    }

    private struct Mutable {
        var challenge: DigestChallenge
        var nonceCount = 0
        var cnonce: String
        var sessionHA1: String?
        /// H(user:realm:password) and the realm it is for: the same for every request of a space.
        var plainHA1: (realm: String, value: String)?
    }

    let user: String
    private let password: String
    let algorithm: DigestAlgorithm
    /// The qop this authorizer answers with (`auth`, `auth-int`, or nil for an RFC 2069 server).
    let qop: String?
    private let state: LockedValue<Mutable>
    private let makeCnonce: @Sendable () -> String

    /// - Parameter bodyIsHashable: whether the request's body can be hashed for `auth-int`.
    /// - Throws: ``SesameError/Code/unsupportedAlgorithm`` for an algorithm Sesame does not
    ///   implement; ``SesameError/Code/unsupportedCredential`` when only `auth-int` is offered and
    ///   the body cannot be hashed.
    init(
        challenge: DigestChallenge,
        user: String,
        password: String,
        bodyIsHashable: Bool,
        makeCnonce: @escaping @Sendable () -> String = DigestAuthorizer.randomCnonce
    ) throws {
        guard let algorithm = challenge.algorithm else {
            throw SesameError(
                .unsupportedAlgorithm,
                "Digest algorithm '\(challenge.algorithmName ?? "?")' is not one Sesame implements (MD5, SHA-256, SHA-512-256, and -sess)"
            )
        }
        if challenge.qopOptions.isEmpty {
            qop = nil
        } else if challenge.qopOptions.contains("auth-int"), bodyIsHashable {
            qop = "auth-int"
        } else if challenge.qopOptions.contains("auth") {
            qop = "auth"
        } else if challenge.qopOptions.contains("auth-int") {
            throw SesameError(
                .unsupportedCredential,
                "the server asks for Digest qop=auth-int, which needs a hash of the body, and a streamed body has none"
            )
        } else {
            throw SesameError(
                .unsupportedCredential,
                "Digest qop '\(challenge.qopOptions.joined(separator: ","))' is not auth or auth-int"
            )
        }
        self.user = user
        self.password = password
        self.algorithm = algorithm
        self.makeCnonce = makeCnonce
        state = LockedValue(Mutable(challenge: challenge, cnonce: makeCnonce()))
    }

    static let randomCnonce: @Sendable () -> String = {
        (0..<16).map { _ in UInt8.random(in: 0...255) }.hexString()
    }

    /// "Digest SHA-256 qop=auth" for traces.
    var summary: String { "Digest \(algorithm) qop=\(qop ?? "none")" }

    /// The header value for a request, and what its `rspauth` must be.
    /// - Parameters:
    ///   - nc: a nonce count to use instead of the next one (for test vectors).
    ///   - bodyHash: the hex hash of the request body with ``algorithm``'s hash (for `auth-int`).
    func authorization(
        method: String,
        uri: String,
        bodyHash: () throws -> String,
        nc fixedCount: Int? = nil
    ) rethrows -> (String, Expectation) {
        let (challenge, count, cnonce, cachedHA1, plainHA1) = state.withLock { state in
            state.nonceCount = fixedCount ?? state.nonceCount + 1
            return (state.challenge, state.nonceCount, state.cnonce, state.sessionHA1, state.plainHA1)
        }
        let h = algorithm.hex(joining:)
        var ha1: String
        if let cachedHA1 {
            ha1 = cachedHA1
        } else if let plainHA1, plainHA1.realm == challenge.realm {
            ha1 = plainHA1.value
        } else {
            ha1 = h([user, challenge.realm, password])
            let computed = ha1
            state.withLock { $0.plainHA1 = (challenge.realm, computed) }
        }
        if algorithm.isSession, cachedHA1 == nil {
            ha1 = h([ha1, challenge.nonce, cnonce])
            state.withLock { state in
                if state.challenge.nonce == challenge.nonce { state.sessionHA1 = ha1 }
            }
        }
        let ha2 = h(qop == "auth-int" ? [method, uri, try bodyHash()] : [method, uri])
        let nc = withUnsafeBytes(of: UInt32(truncatingIfNeeded: count).bigEndian) { Array($0) }.hexString()
        let response =
            if let qop { h([ha1, challenge.nonce, nc, cnonce, qop, ha2]) } else { h([ha1, challenge.nonce, ha2]) }
        var header = AuthParameterList(scheme: "Digest")
        if challenge.userhash {
            header.append("username", quoted: h([user, challenge.realm]))
        } else if user.unicodeScalars.allSatisfy({ $0.isASCII && $0.value >= 0x20 && $0.value != 0x7F }) {
            header.append("username", quoted: user)
        } else {
            header.append("username*", token: "UTF-8''\(Self.extValue(user))")
        }
        header.append("realm", quoted: challenge.realm)
        header.append("uri", quoted: uri)
        if challenge.algorithmName != nil { header.append("algorithm", token: algorithm.description) }
        header.append("nonce", quoted: challenge.nonce)
        if let qop {
            header.append("nc", token: nc)
            header.append("cnonce", quoted: cnonce)
            header.append("qop", token: qop)
        }
        header.append("response", quoted: response)
        if let opaque = challenge.opaque { header.append("opaque", quoted: opaque) }
        if challenge.userhash { header.append("userhash", token: "true") }
        let expectation = Expectation(ha1: ha1, nonce: challenge.nonce, nc: nc, cnonce: cnonce, qop: qop, uri: uri)
        return (header.text, expectation)
    }

    /// A new challenge for the same space (stale nonce): its nonce replaces ours, counting restarts.
    func renew(_ challenge: DigestChallenge) {
        state.withLock { state in
            state.challenge = challenge
            state.nonceCount = 0
            state.cnonce = makeCnonce()
            state.sessionHA1 = nil
        }
    }

    /// Checks an `Authentication-Info` value against the request it answers: a wrong `rspauth`
    /// throws (the server did not prove it knows the password); a `nextnonce` replaces the nonce.
    /// - Parameter responseBodyHash: for `auth-int`, the hex hash of the response body.
    func verify(_ info: String, expectation: Expectation, responseBodyHash: String? = nil) throws {
        let parameters = AuthChallengeParser.parse("Info " + info).challenges.first
        if let rspauth = parameters?.parameter("rspauth") {
            let h = algorithm.hex(joining:)
            let ha2 = h(
                expectation.qop == "auth-int"
                    ? ["", expectation.uri, responseBodyHash ?? h([""])] : ["", expectation.uri]
            )
            let expected =
                if let qop = expectation.qop {
                    h([expectation.ha1, expectation.nonce, expectation.nc, expectation.cnonce, qop, ha2])
                } else {
                    h([expectation.ha1, expectation.nonce, ha2])
                }
            guard rspauth.lowercased() == expected else {
                throw SesameError(
                    .serverAuthenticationFailed,
                    "the server's Digest rspauth is wrong: it did not prove it knows the password"
                )
            }
        }
        if let next = parameters?.parameter("nextnonce"), !next.isEmpty {
            state.withLock { state in
                guard state.challenge.nonce != next else { return }
                state.challenge = state.challenge.replacingNonce(next)
                state.nonceCount = 0
                state.sessionHA1 = nil
            }
        }
    }

    /// RFC 8187 ext-value encoding of UTF-8 text.
    private static func extValue(_ text: String) -> String {
        let allowed = Set("!#$&+-.^_`|~".utf8)
        return text.utf8.map { byte in
            let isAlphanumeric =
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
            return isAlphanumeric || allowed.contains(byte)
                ? String(UnicodeScalar(byte)) : HexDigits.percentEscape(byte)
        }.joined()
    }
}
