import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Sesame's own NTLMv2 against an acceptor that is not ours: gss-ntlmssp behind Apache's
/// `mod_auth_gssapi`, which offers `WWW-Authenticate: NTLM` and binds each exchange to its
/// connection.
@Suite struct NTLMAuthenticationTests {
    final class Answer: SessionTaskDelegate {
        let credential: Credential
        let failures = Recorder<Int>()
        init(_ credential: Credential) { self.credential = credential }
        func session(
            _ session: Session,
            task: SessionTask,
            didReceive challenge: AuthenticationChallenge
        ) async -> (AuthChallengeDisposition, Credential?) {
            guard challenge.protectionSpace.authenticationMethod == .ntlm else { return (.performDefaultHandling, nil) }
            failures.append(challenge.previousFailureCount)
            return (.useCredential, credential)
        }
    }

    private static let user = ApacheServer.ntlmUsers.first!

    private func session(
        _ delegate: Answer?,
        cleartext: Bool = true,
        events: Recorder<SessionEvent>? = nil
    ) -> Session {
        var configuration = SessionConfiguration.default
        configuration.proxy = .none
        configuration.credentialStorage = CredentialStorage()
        configuration.authenticationMethods = [.ntlm]
        configuration.allowsCleartextPasswords = cleartext
        if let events { configuration.eventObserver = { events.append($0) } }
        return Session(configuration: configuration, delegate: delegate)
    }

    private func apache() async throws -> ApacheServer {
        try await ApacheServer(kerberos: try await KerberosRealm.shared())
    }

    @Test func theRightPasswordTakesTwoLegsOnOneConnection() async throws {
        let apache = try await apache()
        defer { apache.stop() }
        let delegate = Answer(Credential(user: Self.user.key, password: Self.user.value, persistence: .none))
        let events = Recorder<SessionEvent>()
        let url = URL(string: "http://localhost:\(apache.port)/negotiate-ntlm/ok.txt")!
        let session = session(delegate, events: events)
        let (data, response) = try await session.data(from: url)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "negotiate ok\n")
        #expect(delegate.failures.all == [0])
        let heads = events.all.compactMap { if case .requestHeadSent(let head) = $0 { head } else { nil } }
        #expect(heads.filter { $0.contains("Authorization: NTLM ") }.count == 2, "\(heads)")
        let connections = events.all.filter { if case .connected(_, _, let reused) = $0 { !reused } else { false } }
        #expect(connections.count == 1)
        #expect(apache.authenticatedUsers.last?.contains("carol") == true, "\(apache.authenticatedUsers)")
        // The authenticated connection is not lent again: the next request opens its own.
        let (_, again) = try await session.data(from: url)
        #expect(again.status == 200)
        let opened = events.all.filter { if case .connected(_, _, let reused) = $0 { !reused } else { false } }
        #expect(opened.count == 2, "\(events.all)")
    }

    @Test func overTLSTheAnswerCarriesTheConnectionsBinding() async throws {
        let pki = try TestPKI()
        let apache = try await ApacheServer(kerberos: try await KerberosRealm.shared(), tls: try pki.leaf())
        defer { apache.stop() }
        var configuration = SessionConfiguration.default
        configuration.proxy = .none
        configuration.credentialStorage = CredentialStorage()
        configuration.authenticationMethods = [.ntlm]
        configuration.tls.trustRoots = .anchors([pki.root.certificate])
        let delegate = Answer(Credential(user: Self.user.key, password: Self.user.value, persistence: .none))
        // MsvAvChannelBindings names Apache's certificate; gss-ntlmssp, asked for no binding, takes it.
        let url = URL(string: "https://localhost:\(apache.port)/negotiate-ntlm/ok.txt")!
        let (data, response) = try await Session(configuration: configuration, delegate: delegate).data(from: url)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "negotiate ok\n")
    }

    @Test func aWrongPasswordIsAskedAgainUpToTheLimit() async throws {
        let apache = try await apache()
        defer { apache.stop() }
        let delegate = Answer(Credential(user: Self.user.key, password: "not-carols", persistence: .none))
        let url = URL(string: "http://localhost:\(apache.port)/negotiate-ntlm/ok.txt")!
        let (_, response) = try await session(delegate).data(from: url)
        #expect(response.status == 401)
        #expect(delegate.failures.all == [0, 1, 2])
    }

    @Test func plainHTTPNeedsConsentAsBasicDoes() async throws {
        let apache = try await apache()
        defer { apache.stop() }
        let delegate = Answer(Credential(user: Self.user.key, password: Self.user.value, persistence: .none))
        let url = URL(string: "http://localhost:\(apache.port)/negotiate-ntlm/ok.txt")!
        let error = await #expect(throws: SesameError.self) {
            try await session(delegate, cleartext: false).data(from: url)
        }
        #expect(error?.code == .cleartextCredentialRefused)
        #expect(error?.detail.contains("NTLM response") == true, "\(String(describing: error))")
        // The password in the URL is consent for that origin.
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.user = Self.user.key
        components.password = Self.user.value
        let (_, response) = try await session(nil, cleartext: false).data(from: components.url!)
        #expect(response.status == 200)
    }

    @Test func theCLIAnswersNTLMWhenAsked() async throws {
        let apache = try await apache()
        defer { apache.stop() }
        let url = "http://localhost:\(apache.port)/negotiate-ntlm/ok.txt"
        let login = "\(Self.user.key):\(Self.user.value)"
        let asked = try await runSesame(["--ntlm", "-u", login, "-v", url])
        #expect(asked.status == 0, "\(asked.stderr)")
        #expect(asked.stdout == "negotiate ok\n")
        #expect(asked.stderr.components(separatedBy: "> Authorization: NTLM ").count - 1 == 2)
        let unasked = try await runSesame(["-u", login, "-i", url])
        #expect(unasked.stdout.hasPrefix("HTTP/1.1 401"))
    }
}
