import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Digest through sessions against ``DigestAuthGate`` on loopback.
@Suite struct DigestSessionTests {
    let users = ["ada": "s3cret", "Jäsøn Doe": "Secret, or not?"]

    func digestServer(_ options: DigestAuthGate.Options) throws -> (LocalServer, DigestAuthGate) {
        let gate = try DigestAuthGate(users: users, options: options)
        return (try server(tls: true) { request in gate.respond(request) }, gate)
    }

    func options(_ adjust: (inout DigestAuthGate.Options) -> Void) -> DigestAuthGate.Options {
        var options = DigestAuthGate.Options()
        adjust(&options)
        return options
    }

    @Test(arguments: ["MD5", "MD5-sess", "SHA-256", "SHA-256-sess", "SHA-512-256", "SHA-512-256-sess"])
    func everyAlgorithmAuthenticatesAndChecksRspauth(algorithm: String) async throws {
        let (origin, _) = try digestServer(options { $0.algorithm = algorithm })
        defer { origin.shutdown() }
        let traces = Recorder<ChallengeTrace>()
        let delegate = ScriptedDelegate([(.useCredential, ada)])
        let (data, response) = try await challengeSession(delegate: delegate, traces: traces)
            .data(from: url(origin, "/private/x"))
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "hello ada")
        #expect(traces.all.first?.detail == "Digest \(DigestAlgorithm(algorithm)!) qop=auth")
    }

    @Test func userhashAndAUTF8UserName() async throws {
        for userhash in [true, false] {
            let (origin, _) = try digestServer(
                options {
                    $0.userhash = userhash
                    $0.algorithm = "SHA-512-256"
                }
            )
            defer { origin.shutdown() }
            let credential = Credential(user: "Jäsøn Doe", password: "Secret, or not?", persistence: .none)
            let (data, _) = try await challengeSession(delegate: ScriptedDelegate([(.useCredential, credential)]))
                .data(from: url(origin, "/x"))
            #expect(String(decoding: data, as: UTF8.self) == "hello Jäsøn Doe")
            let sent = origin.requests.last?.headers["authorization"] ?? ""
            #expect(sent.contains("userhash=true") == userhash)
            #expect(sent.contains("username*=UTF-8''") == !userhash)
        }
    }

    @Test func aWrongRspauthFailsTheTask() async throws {
        let (origin, _) = try digestServer(options { $0.rspauth = .wrong })
        defer { origin.shutdown() }
        let error = await #expect(throws: SesameError.self) {
            _ = try await challengeSession(delegate: ScriptedDelegate([(.useCredential, ada)]))
                .data(from: url(origin, "/x"))
        }
        #expect(error?.code == .serverAuthenticationFailed)
    }

    @Test func authIntCoversTheRequestAndResponseBodies() async throws {
        let (origin, _) = try digestServer(options { $0.qop = "auth-int" })
        defer { origin.shutdown() }
        var request = HTTPRequest(url: url(origin, "/upload"))
        request.method = "POST"
        request.body = .data(Data("the body".utf8))
        let (data, _) = try await challengeSession(delegate: ScriptedDelegate([(.useCredential, ada)])).data(
            for: request
        )
        #expect(String(decoding: data, as: UTF8.self) == "hello ada")
        // A streamed body cannot be hashed, and auth-int is all this server offers.
        var streamed = request
        streamed.body = .stream(
            AsyncStream<[UInt8]> {
                $0.yield(Array("x".utf8))
                $0.finish()
            },
            length: 1
        )
        let error = await #expect(throws: SesameError.self) {
            _ = try await challengeSession(delegate: ScriptedDelegate([(.useCredential, ada)])).data(for: streamed)
        }
        #expect(error?.code == .unsupportedCredential)
    }

    @Test func laterRequestsArePreemptiveWithIncreasingNonceCounts() async throws {
        let (origin, _) = try digestServer(options { _ in })
        defer { origin.shutdown() }
        let delegate = ScriptedDelegate([(.useCredential, ada)])
        let session = challengeSession(delegate: delegate)
        for path in ["/a/1", "/a/2", "/a/3"] {
            let (data, _) = try await session.data(from: url(origin, path))
            #expect(String(decoding: data, as: UTF8.self) == "hello ada")
        }
        // 401 + 200, then one round trip each.
        #expect(origin.requests.count == 4)
        let counts = origin.requests.compactMap { $0.headers["authorization"] }.compactMap {
            AuthChallengeParser.parse($0).challenges.first?.parameter("nc")
        }
        #expect(counts == ["00000001", "00000002", "00000003"])
        #expect(delegate.seen.all.count == 1)
    }

    @Test func aStaleNonceIsRenewedWithoutAskingOrCountingAFailure() async throws {
        let (origin, _) = try digestServer(options { $0.nonceUses = 1 })
        defer { origin.shutdown() }
        let delegate = ScriptedDelegate([(.useCredential, ada)])
        let traces = Recorder<ChallengeTrace>()
        let session = challengeSession(delegate: delegate, traces: traces)
        _ = try await session.data(from: url(origin, "/a/1"))
        let (data, response) = try await session.data(from: url(origin, "/a/2"))
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "hello ada")
        #expect(delegate.seen.all.count == 1)
        #expect(traces.all.contains { $0.detail?.contains("stale nonce renewed") == true })
    }

    @Test func aNextnonceIsUsedForTheNextRequest() async throws {
        let (origin, _) = try digestServer(
            options {
                $0.sendsNextnonce = true
                $0.nonceUses = 1
            }
        )
        defer { origin.shutdown() }
        let session = challengeSession(delegate: ScriptedDelegate([(.useCredential, ada)]))
        for path in ["/a/1", "/a/2", "/a/3"] { _ = try await session.data(from: url(origin, path)) }
        // Each nonce is used once, and the next one came with the previous answer: no 401 after the first.
        #expect(origin.requests.count == 4)
    }

    @Test func theStrongestSchemeGoesFirstAndRejectMovesDown() async throws {
        let (origin, _) = try digestServer(
            options {
                $0.algorithm = "SHA-256"
                $0.otherChallenges = [
                    "Basic realm=\"Sesame Digest\"",
                    "Digest realm=\"Sesame Digest\", nonce=\"x\", algorithm=MD5, qop=\"auth\"",
                ]
            }
        )
        defer { origin.shutdown() }
        final class Recording: SessionTaskDelegate {
            let seen = Recorder<String>()
            func session(
                _ session: Session,
                task: SessionTask,
                didReceive challenge: AuthenticationChallenge
            ) async -> (AuthChallengeDisposition, Credential?) {
                if challenge.protectionSpace.authenticationMethod == .serverTrust {
                    return (.performDefaultHandling, nil)
                }
                seen.append(challenge.protectionSpace.authenticationMethod.description)
                return (.rejectProtectionSpace, nil)
            }
        }
        let delegate = Recording()
        let traces = Recorder<ChallengeTrace>()
        let (_, response) = try await challengeSession(delegate: delegate, traces: traces).data(from: url(origin, "/x"))
        #expect(response.status == 401)
        #expect(delegate.seen.all == ["Digest", "Digest", "Basic"])
        #expect(traces.all.compactMap(\.detail) == ["Digest SHA-256", "Digest MD5", "Basic"])
    }

    @Test func anUnknownAlgorithmIsNotAnsweredWithAGuess() async throws {
        let origin = try server(tls: true) { _ in
            .text(
                "no",
                status: 401,
                headers: [("WWW-Authenticate", "Digest realm=\"r\", nonce=\"n\", algorithm=SHA-1, qop=\"auth\"")]
            )
        }
        defer { origin.shutdown() }
        let storage = CredentialStorage()
        try storage.setDefaultCredential(
            ada,
            for: ProtectionSpace(
                host: "localhost",
                port: origin.port,
                protocol: "https",
                realm: "r",
                authenticationMethod: .httpDigest
            )
        )
        let (_, response) = try await challengeSession(storage: storage).data(from: url(origin, "/x"))
        #expect(response.status == 401)
        #expect(origin.requests.count == 1)
    }
}
