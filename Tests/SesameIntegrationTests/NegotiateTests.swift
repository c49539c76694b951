import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Negotiate (RFC 4559, Kerberos through SPNEGO) against Apache httpd's `mod_auth_gssapi` with a
/// loopback MIT KDC, and against scripted servers that misbehave.
@Suite(.serialized) struct NegotiateTests {
    /// Answers Negotiate with `credential` (nil: default handling, the ticket cache) and Basic
    /// with `basic`.
    final class Answer: SessionTaskDelegate {
        let credential: Credential?
        let basic: Credential?
        let asked = Recorder<String>()
        init(_ credential: Credential?, basic: Credential? = nil) {
            self.credential = credential
            self.basic = basic
        }
        func session(
            _ session: Session,
            task: SessionTask,
            didReceive challenge: AuthenticationChallenge
        ) async -> (AuthChallengeDisposition, Credential?) {
            let method = challenge.protectionSpace.authenticationMethod
            asked.append("\(method) \(challenge.previousFailureCount)")
            switch method {
            case .negotiate: return credential.map { (.useCredential, $0) } ?? (.performDefaultHandling, nil)
            case .httpBasic: return basic.map { (.useCredential, $0) } ?? (.performDefaultHandling, nil)
            default: return (.performDefaultHandling, nil)
            }
        }
    }

    private func session(_ delegate: Answer?, events: Recorder<SessionEvent>? = nil) -> Session {
        var configuration = SessionConfiguration.default
        configuration.proxy = .none
        configuration.allowsCleartextPasswords = true
        configuration.credentialStorage = CredentialStorage()
        if let events { configuration.eventObserver = { events.append($0) } }
        return Session(configuration: configuration, delegate: delegate)
    }

    /// What the session reported as problems (``SessionEvent/challengeHeaderProblem(_:)``).
    private static func problems(in events: Recorder<SessionEvent>) -> [String] {
        events.all.compactMap { if case .challengeHeaderProblem(let text) = $0 { text } else { nil } }
    }

    /// Requests `/negotiate/ok.txt` with default handling only, expects its 401 delivered, and
    /// returns the problems reported on the way.
    private func problemsOfAnUnansweredRequest(to apache: ApacheServer) async throws -> [String] {
        let events = Recorder<SessionEvent>()
        let url = URL(string: "http://localhost:\(apache.port)/negotiate/ok.txt")!
        let (_, response) = try await session(nil, events: events).data(from: url)
        #expect(response.status == 401)
        return Self.problems(in: events)
    }

    private static func password(_ user: String, _ persistence: CredentialPersistence = .none) -> Credential {
        Credential(user: user, password: KerberosRealm.users[user]!, persistence: persistence)
    }

    @Test func aPasswordGetsATicketAndTheServerProvesItself() async throws {
        let realm = try await KerberosRealm.shared()
        let apache = try await ApacheServer(kerberos: realm)
        defer { apache.stop() }
        let events = Recorder<SessionEvent>()
        let delegate = Answer(Self.password("bob", .forSession))
        let session = session(delegate, events: events)
        let url = URL(string: "http://localhost:\(apache.port)/negotiate/ok.txt")!
        let (data, response) = try await session.data(from: url)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "negotiate ok\n")
        // mod_auth_gssapi sends its final token (the AP-REP); a token that did not verify fails.
        #expect(response.headers["WWW-Authenticate"]?.hasPrefix("Negotiate ") == true)
        #expect(await apache.accessLog(atLeast: 2).count == 2)
        #expect(apache.authenticatedUsers.last?.hasPrefix("bob@\(KerberosRealm.name) GET") == true)
        // Never preemptive: the next request is challenged, and answered from the storage, on the
        // same connection: the server authenticates each request on its own (Persistent-Auth: false).
        #expect(response.headers["Persistent-Auth"] == "false")
        let (_, again) = try await session.data(from: url)
        #expect(again.status == 200)
        #expect(await apache.accessLog(atLeast: 4).count == 4)
        #expect(delegate.asked.all == ["Negotiate 0"])
        let opened = events.all.filter { if case .connected(_, _, let reused) = $0 { !reused } else { false } }
        #expect(opened.count == 1, "\(events.all)")
        #expect(!events.all.contains { if case .challengeHeaderProblem = $0 { true } else { false } }, "\(events.all)")
    }

    @Test func overTLSTheTokenCarriesTheConnectionsBinding() async throws {
        let realm = try await KerberosRealm.shared()
        let pki = try TestPKI()
        let apache = try await ApacheServer(kerberos: realm, tls: try pki.leaf())
        defer { apache.stop() }
        var configuration = SessionConfiguration.default
        configuration.proxy = .none
        configuration.credentialStorage = CredentialStorage()
        configuration.tls.trustRoots = .anchors([pki.root.certificate])
        let session = Session(configuration: configuration, delegate: Answer(Self.password("alice")))
        // The token is bound to this TLS connection (RFC 5929 tls-server-end-point of Apache's
        // certificate); mod_auth_gssapi's acceptor, which asks for no binding, takes it.
        let (data, response) = try await session.data(
            from: URL(string: "https://localhost:\(apache.port)/negotiate/ok.txt")!
        )
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "negotiate ok\n")
        #expect(apache.authenticatedUsers.last?.hasPrefix("alice@\(KerberosRealm.name) GET") == true)
    }

    @Test func defaultHandlingAnswersWithTheTicketCache() async throws {
        let realm = try await KerberosRealm.shared()
        let cache = realm.defaultCache
        try realm.kinit("alice", into: cache)
        defer { realm.kdestroy(cache) }
        let apache = try await ApacheServer(kerberos: realm)
        defer { apache.stop() }
        let url = URL(string: "http://localhost:\(apache.port)/negotiate/ok.txt")!
        // Without a delegate and with one that answers default handling.
        for delegate in [nil, Answer(nil)] {
            let (data, response) = try await session(delegate).data(from: url)
            #expect(response.status == 200)
            #expect(String(decoding: data, as: UTF8.self) == "negotiate ok\n")
        }
        #expect(apache.authenticatedUsers.filter { $0.hasPrefix("alice@\(KerberosRealm.name) GET") }.count == 2)
    }

    @Test func withoutATicketThe401IsDeliveredAndSaysWhy() async throws {
        let realm = try await KerberosRealm.shared()
        realm.kdestroy(realm.defaultCache)
        let apache = try await ApacheServer(kerberos: realm)
        defer { apache.stop() }
        let problems = try await problemsOfAnUnansweredRequest(to: apache)
        #expect(problems.contains { $0.contains("No Kerberos credentials available") }, "\(problems)")
    }

    @Test func anExpiredTicketIsNotSent() async throws {
        let realm = try await KerberosRealm.shared()
        let cache = realm.defaultCache
        try realm.kinit("alice", into: cache, lifetime: "1s")
        defer { realm.kdestroy(cache) }
        // The one wait of the suite: a ticket ends by the KDC's clock, which no test drives. One
        // second of life, then the KDC's one second of clock skew, and a margin.
        try await Task.sleep(for: .seconds(2.5))
        #expect(try !realm.holdsValidTicket(cache))
        let apache = try await ApacheServer(kerberos: realm)
        defer { apache.stop() }
        let problems = try await problemsOfAnUnansweredRequest(to: apache)
        #expect(problems.contains { $0.lowercased().contains("expired") }, "\(problems)")
        // Nothing but the first request reached the server: no stale ticket was sent.
        #expect(await apache.accessLog(atLeast: 1).count == 1)
    }

    @Test func withoutATicketBasicIsAnsweredNext() async throws {
        let realm = try await KerberosRealm.shared()
        realm.kdestroy(realm.defaultCache)
        let apache = try await ApacheServer(kerberos: realm)
        defer { apache.stop() }
        let delegate = Answer(nil, basic: Self.password("alice"))
        let url = URL(string: "http://localhost:\(apache.port)/negotiate-or-basic/ok.txt")!
        let (data, response) = try await session(delegate).data(from: url)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "negotiate ok\n")
        // Negotiate is offered first and asked first; Basic after its ticket could not be had.
        #expect(delegate.asked.all == ["Negotiate 0", "Basic 0"])
    }

    @Test func ntlmThroughSPNEGOTakesThreeLegsWhenAllowed() async throws {
        let realm = try await KerberosRealm.shared()
        let apache = try await ApacheServer(kerberos: realm)
        defer { apache.stop() }
        let (user, password) = try #require(ApacheServer.ntlmUsers.first)
        let credential = Credential(user: user, password: password, persistence: .none)
        let url = URL(string: "http://localhost:\(apache.port)/negotiate-ntlm/ok.txt")!
        // Kerberos only by default: carol has no principal, so no token can be made, and the
        // server's other offer (NTLM on its own) is not answered: its 401 is delivered.
        let kerberosOnly = Recorder<SessionEvent>()
        let (_, refused) = try await session(Answer(credential), events: kerberosOnly).data(from: url)
        #expect(refused.status == 401)
        let problems = Self.problems(in: kerberosOnly)
        #expect(problems.contains { $0.contains("carol") && $0.contains("not answered") }, "\(problems)")
        // NTLM through SPNEGO runs in a child (the CLI) whose GSSAPI has gss-ntlmssp installed:
        // this process keeps to the built-in mechanisms (KerberosRealm.shared() sets it so).
        let environment = try realm.ntlmMechanismEnvironment()
        let login = "\(user):\(password)"
        let ntlm = try await runSesame(
            ["--negotiate", "--spnego-ntlm", "-u", login, "-v", url.absoluteString],
            environment: environment
        )
        #expect(ntlm.status == 0, "\(ntlm.stderr)")
        #expect(ntlm.stdout == "negotiate ok\n")
        // NEGOTIATE, then AUTHENTICATE after the server's CHALLENGE: two tokens on one connection,
        // which the server binds the exchange to.
        #expect(ntlm.stderr.components(separatedBy: "> Authorization: Negotiate ").count - 1 == 2, "\(ntlm.stderr)")
        #expect(apache.authenticatedUsers.last?.contains("carol") == true, "\(apache.authenticatedUsers)")
        let withoutNTLM = try await runSesame(
            ["--negotiate", "-u", login, url.absoluteString],
            environment: environment
        )
        #expect(withoutNTLM.status != 0)
        #expect(withoutNTLM.stderr.contains("Negotiate failed"), "\(withoutNTLM.stderr)")
    }

    @Test func aWrongPasswordFailsWithKerberosOwnWords() async throws {
        let realm = try await KerberosRealm.shared()
        let apache = try await ApacheServer(kerberos: realm)
        defer { apache.stop() }
        let wrong = Credential(user: "alice", password: "not-her-password", persistence: .none)
        let url = URL(string: "http://localhost:\(apache.port)/negotiate/ok.txt")!
        let error = await #expect(throws: SesameError.self) { try await session(Answer(wrong)).data(from: url) }
        #expect(error?.code == .negotiateFailed)
        #expect(error?.detail.contains("alice") == true)
        #expect(error?.detail.contains("not-her-password") == false)
        // Nothing was sent: no ticket, no password.
        #expect(await apache.accessLog(atLeast: 1).count == 1)
    }

    @Test func aServerWithoutAPrincipalIsNamed() async throws {
        let realm = try await KerberosRealm.shared()
        let apache = try await ApacheServer(kerberos: realm)
        defer { apache.stop() }
        // The realm has HTTP/localhost only: the URL's host is the principal, never looked up.
        let url = URL(string: "http://127.0.0.1:\(apache.port)/negotiate/ok.txt")!
        let error = await #expect(throws: SesameError.self) {
            try await session(Answer(Self.password("alice"))).data(from: url)
        }
        #expect(error?.code == .negotiateFailed)
        #expect(
            error?.detail.contains("HTTP/127.0.0.1@\(KerberosRealm.name) not found") == true,
            "\(String(describing: error))"
        )
    }

    @Test func aFinalTokenThatDoesNotVerifyFailsTheTask() async throws {
        _ = try await KerberosRealm.shared()
        var configuration = LocalServer.Configuration.plainHTTP
        // Takes any ticket, then claims success with a token that is no Kerberos reply.
        configuration.handler = { request in
            guard request.headers["authorization"]?.hasPrefix("Negotiate ") == true else {
                return .text("who are you", status: 401, headers: [("WWW-Authenticate", "Negotiate")])
            }
            return .text("forged", headers: [("WWW-Authenticate", "Negotiate oQcwBaADCgEA")])
        }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let error = await #expect(throws: SesameError.self) {
            try await session(Answer(Self.password("alice"))).data(from: URL(string: server.baseURL + "/")!)
        }
        #expect(error?.code == .serverAuthenticationFailed, "\(String(describing: error))")
    }

    @Test func aSuccessWithoutAFinalTokenIsDeliveredWithAWarning() async throws {
        _ = try await KerberosRealm.shared()
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { request in
            guard request.headers["authorization"]?.hasPrefix("Negotiate ") == true else {
                return .text("who are you", status: 401, headers: [("WWW-Authenticate", "Negotiate")])
            }
            return .text("trust me")
        }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let events = Recorder<SessionEvent>()
        let (data, response) = try await session(Answer(Self.password("alice")), events: events)
            .data(from: URL(string: server.baseURL + "/")!)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "trust me")
        let problems = Self.problems(in: events)
        #expect(problems.contains { $0.contains("did not prove its identity") }, "\(problems)")
    }

    @Test func theCLIAnswersNegotiateOnlyWhenAsked() async throws {
        let realm = try await KerberosRealm.shared()
        let cache = "FILE:" + realm.prefix.appendingPathComponent("cli.ccache").path
        try realm.kinit("alice", into: cache)
        defer { realm.kdestroy(cache) }
        let apache = try await ApacheServer(kerberos: realm)
        defer { apache.stop() }
        let url = "http://localhost:\(apache.port)/negotiate/ok.txt"
        var environment = realm.environment
        environment["KRB5CCNAME"] = cache
        let asked = try await runSesame(["--negotiate", "-u", ":", "-v", url], environment: environment)
        #expect(asked.status == 0, "\(asked.stderr)")
        #expect(asked.stdout == "negotiate ok\n")
        #expect(asked.stderr.contains("> Authorization: Negotiate "))
        // As curl: without --negotiate (or --anyauth) the 401 stands.
        let unasked = try await runSesame(["-i", url], environment: environment)
        #expect(unasked.stdout.hasPrefix("HTTP/1.1 401"), "\(unasked.stdout)")
        let usage = try await runSesame(["-u", ":", url], environment: environment)
        #expect(usage.status == 2)
        #expect(usage.stderr.contains("needs --negotiate"))
    }
}
