import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// HTTP Digest against Apache httpd's mod_auth_digest and httpbin on loopback.
@Suite(.serialized) struct DigestAuthenticationTests {
    final class Answer: SessionTaskDelegate {
        let credential: Credential
        let counts = Recorder<Int>()
        init(_ user: String, _ password: String) {
            credential = Credential(user: user, password: password, persistence: .forSession)
        }
        func session(
            _ session: Session,
            task: SessionTask,
            didReceive challenge: AuthenticationChallenge
        ) async -> (AuthChallengeDisposition, Credential?) {
            // Server trust reaches the task-level method too (Apple's rule): default handling.
            if challenge.protectionSpace.authenticationMethod == .serverTrust { return (.performDefaultHandling, nil) }
            counts.append(challenge.previousFailureCount)
            return (.useCredential, credential)
        }
    }

    func session(_ delegate: Answer, traces: Recorder<ChallengeTrace>? = nil) -> Session {
        var configuration = SessionConfiguration.default
        configuration.credentialStorage = CredentialStorage()
        if let traces {
            configuration.eventObserver = { event in
                if case .challenge(let trace) = event { traces.append(trace) }
            }
        }
        return Session(configuration: configuration, delegate: delegate)
    }

    @Test func apacheAcceptsMD5AndProvesItselfWithRspauth() async throws {
        let apache = try await ApacheServer()
        defer { apache.stop() }
        for (user, password) in [("user", "passwd"), ("test", "123£"), ("Mufasa", "Circle Of Life")] {
            let delegate = Answer(user, password)
            let session = session(delegate)
            let (data, response) = try await session.data(from: URL(string: apache.baseURL + "/digest/ok.txt")!)
            #expect(response.status == 200, "\(user)")
            #expect(String(decoding: data, as: UTF8.self) == "digest ok\n")
            #expect(response.headers["Authentication-Info"]?.contains("rspauth=") == true)
            // Preemptive: the next request carries nc=00000002 and is not challenged.
            let (_, second) = try await session.data(from: URL(string: apache.baseURL + "/digest/ok.txt")!)
            #expect(second.status == 200)
            #expect(delegate.counts.all == [0])
        }
    }

    @Test func apacheRefusesAWrongPasswordUpToTheLimit() async throws {
        let apache = try await ApacheServer()
        defer { apache.stop() }
        let delegate = Answer("user", "wrong")
        let (_, response) = try await session(delegate).data(from: URL(string: apache.baseURL + "/digest/ok.txt")!)
        #expect(response.status == 401)
        #expect(delegate.counts.all == [0, 1, 2])
    }

    @Test func apacheStaleNoncesAreRenewedWithoutAsking() async throws {
        let apache = try await ApacheServer()
        defer { apache.stop() }
        let delegate = Answer("user", "passwd")
        let traces = Recorder<ChallengeTrace>()
        let session = session(delegate, traces: traces)
        let target = URL(string: apache.baseURL + "/digest-stale/ok.txt")!
        _ = try await session.data(from: target)
        try await Task.sleep(for: .seconds(ApacheServer.staleNonceLifetime + 1))
        let (data, response) = try await session.data(from: target)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "digest ok\n")
        #expect(delegate.counts.all == [0])
        #expect(traces.all.contains { $0.detail?.contains("stale nonce renewed") == true }, "\(traces.all)")
    }

    @Test func theCLIAnswersDigestAndShowsTheAlgorithm() async throws {
        let apache = try await ApacheServer()
        defer { apache.stop() }
        let url = apache.baseURL + "/digest/ok.txt"
        let run = try await runSesame(["-v", "--digest", "-u", "user:passwd", url])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "digest ok\n")
        #expect(run.stderr.contains("[Digest MD5 qop=auth]"), "\(run.stderr)")
        let anyauth = try await runSesame(["-u", "test:123£", url])
        #expect(anyauth.stdout == "digest ok\n", "\(anyauth.stderr)")
        let wrong = try await runSesame(["-u", "user:nope", url])
        #expect(wrong.status == 6)
        // --basic only: the Basic credential sent up front is refused and the Digest challenge is not answered.
        let basicOnly = try await runSesame(["--basic", "-u", "user:passwd", "-f", url])
        #expect(basicOnly.status == 6)
    }

    @Test(arguments: [("auth", "MD5"), ("auth", "SHA-256"), ("auth-int", "MD5"), ("auth-int", "SHA-256")])
    func httpbinDigest(qop: String, algorithm: String) async throws {
        let httpbin = try await HttpbinServer()
        defer { httpbin.stop() }
        let delegate = Answer("user", "passwd")
        let target = URL(string: "\(httpbin.baseURL)/digest-auth/\(qop)/user/passwd/\(algorithm)")!
        let (data, response) = try await session(delegate).data(from: target)
        #expect(response.status == 200, "\(String(decoding: data, as: UTF8.self))")
        let body = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(body?["authenticated"] as? Bool == true)
    }

    @Test func httpbinsEndlessStaleIsBounded() async throws {
        let httpbin = try await HttpbinServer()
        defer { httpbin.stop() }
        let delegate = Answer("user", "passwd")
        var request = HTTPRequest(url: URL(string: "\(httpbin.baseURL)/digest-auth/auth/user/passwd/MD5/0")!)
        // httpbin decides staleness from this cookie; with it every answer is "stale".
        request.headers.add(name: "Cookie", value: "stale_after=0")
        let (_, response) = try await session(delegate).data(for: request)
        #expect(response.status == 401)
        #expect(delegate.counts.all.count <= 3)
    }
}
