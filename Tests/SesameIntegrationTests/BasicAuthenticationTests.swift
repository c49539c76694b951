import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// HTTP Basic against nginx and httpbin on loopback, through the library and through `sesame`.
@Suite(.serialized) struct BasicAuthenticationTests {
    static let pki: TestPKI = {
        try! TestPKI()  // safe: nothing can be tested without it
    }()

    final class Answer: SessionTaskDelegate {
        let credential: Credential
        let counts = Recorder<Int>()
        init(_ credential: Credential) { self.credential = credential }
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

    func session(delegate: (any SessionTaskDelegate)?, cleartext: Bool = false) -> Session {
        var configuration = SessionConfiguration.default
        configuration.tls.trustRoots = .anchors([Self.pki.root.certificate])
        configuration.credentialStorage = CredentialStorage()
        configuration.allowsCleartextPasswords = cleartext
        return Session(configuration: configuration, delegate: delegate)
    }

    func writeRoot() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("root-\(UUID().uuidString).pem").path
        try Data(Self.pki.root.certificatePEM.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func nginxAcceptsAUTF8PasswordAndTheSecondRequestIsPreemptive() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let delegate = Answer(Credential(user: "test", password: "123£", persistence: .forSession))
        let session = session(delegate: delegate)
        let base = "https://localhost:\(nginx.httpsPort)/basic/"
        let (data, response) = try await session.data(from: URL(string: base + "one")!)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "basic ok user=test")
        let (second, _) = try await session.data(from: URL(string: base + "two")!)
        #expect(String(decoding: second, as: UTF8.self) == "basic ok user=test")
        #expect(delegate.counts.all == [0])
        // 401, 200, then 200 straight away.
        #expect(await nginx.accessLog(atLeast: 3, where: { $0.contains("/basic/") }).count == 3)
    }

    @Test func aWrongPasswordStopsAtTheFailureLimit() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let delegate = Answer(Credential(user: "test", password: "123\u{A3}x", persistence: .none))
        let (_, response) = try await session(delegate: delegate)
            .data(from: URL(string: "https://localhost:\(nginx.httpsPort)/basic/")!)
        #expect(response.status == 401)
        #expect(delegate.counts.all == [0, 1, 2])
    }

    @Test func theCLIAnswersWithMinusUAndExitsSixOnAWrongPassword() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let root = try writeRoot()
        let url = "https://localhost:\(nginx.httpsPort)/basic/"
        let good = try await runSesame(["-v", "-u", "test:123£", "--cacert", root, url])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout == "basic ok user=test")
        #expect(
            good.stderr.contains(
                "* challenge Basic realm=\"Sesame Basic\" localhost:\(nginx.httpsPort) server previousFailureCount=0 answered by URL user info: useCredential (user test)"
            ),
            "\(good.stderr)"
        )
        let bad = try await runSesame(["-u", "test:wrong", "--cacert", root, url])
        #expect(bad.status == 6, "\(bad.stderr)")
        #expect(bad.stderr.contains("authentication failed"))
        let basic = try await runSesame(["--basic", "-u", "user:passwd", "--cacert", root, url])
        #expect(basic.stdout == "basic ok user=user")
        let noPassword = try await runSesame(["-u", "test", "--cacert", root, url])
        #expect(noPassword.status == 2)
        #expect(noPassword.stderr.contains("not a terminal"))
    }

    @Test func theCLIFollowsARedirectWithoutCarryingTheCredential() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let run = try await runSesame([
            "-L", "-u", "user:passwd", "--cacert", try writeRoot(),
            "https://localhost:\(nginx.httpsPort)/basic/redirect-cross",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "auth= cookie=")
    }

    @Test func savedCredentialsAnswerTheNextRunWithoutMinusU() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let root = try writeRoot()
        // A private folder: a store in /tmp is refused.
        let store = try ScratchFolder.make("store").appendingPathComponent("store.json")
            .path
        defer { try? FileManager.default.removeItem(atPath: store) }
        let url = "https://localhost:\(nginx.httpsPort)/basic/"
        let first = try await runSesame([
            "-u", "test:123£", "--save-credentials", "--credential-store", store, "--cacert", root, url,
        ])
        #expect(first.status == 0, "\(first.stderr)")
        let second = try await runSesame(["-v", "--credential-store", store, "--cacert", root, url])
        #expect(second.stdout == "basic ok user=test", "\(second.stderr)")
        #expect(second.stderr.contains("answered by credential storage"))
        let list = try await runSesame(["credentials", "list", "--credential-store", store])
        #expect(list.stdout.contains("user test\t(default)"))
        #expect(!list.stdout.contains("123£"))  // the password never appears
        let removed = try await runSesame([
            "credentials", "remove", "https://localhost:\(nginx.httpsPort)", "-u", "test", "--realm", "Sesame Basic",
            "--method", "basic", "--credential-store", store,
        ])
        #expect(removed.status == 0, "\(removed.stderr)")
        let third = try await runSesame(["--credential-store", store, "--cacert", root, url])
        #expect(third.stdout.contains("401"))
    }

    @Test func twoProcessesWritingTheStoreAtOnceLoseNothing() async throws {
        // A private folder: a store in /tmp is refused.
        let store = try ScratchFolder.make("store").appendingPathComponent("store.json")
            .path
        defer { try? FileManager.default.removeItem(atPath: store) }
        let perWriter = 20
        let failures = Recorder<String>()
        await withTaskGroup(of: Void.self) { group in
            for writer in ["a", "b"] {
                group.addTask {
                    for index in 0..<perWriter {
                        let run = try? await runSesame([
                            "credentials", "add", "https://api.example", "-u", "\(writer)\(index):pw", "--realm", "r",
                            "--credential-store", store,
                        ])
                        if run?.status != 0 { failures.append("\(writer)\(index): \(run?.stderr ?? "did not run")") }
                    }
                }
            }
        }
        #expect(failures.all.isEmpty, "\(failures.all)")
        let space = ProtectionSpace(
            host: "api.example",
            port: 443,
            protocol: "https",
            realm: "r",
            authenticationMethod: nil
        )
        let users = try CredentialStorage(fileURL: URL(fileURLWithPath: store)).credentials(for: space)
        #expect(users.count == 2 * perWriter)
    }

    @Test func aCorruptStoreIsReportedByNameAndLeftAlone() async throws {
        // A private folder: a store in /tmp is refused.
        let store = try ScratchFolder.make("store").appendingPathComponent("store.json")
            .path
        defer { try? FileManager.default.removeItem(atPath: store) }
        let garbage = "{\"format\": \"sesame-credential-store\", \"version\": 1, \"entries\": [tru"
        try Data(garbage.utf8).write(to: URL(fileURLWithPath: store))
        for arguments in [
            ["credentials", "list", "--credential-store", store],
            ["credentials", "add", "https://api.example", "-u", "a:b", "--credential-store", store],
        ] {
            let run = try await runSesame(arguments)
            #expect(run.status == 1)
            #expect(run.stderr.contains(store), "\(run.stderr)")
            #expect(run.stderr.contains("left as it is"))
        }
        #expect(readText(store) == garbage)
    }

    @Test func httpbinBasicAndHiddenBasic() async throws {
        let httpbin = try await HttpbinServer()
        defer { httpbin.stop() }
        let delegate = Answer(Credential(user: "user", password: "passwd", persistence: .none))
        let session = session(delegate: delegate, cleartext: true)
        let (data, response) = try await session.data(from: URL(string: httpbin.baseURL + "/basic-auth/user/passwd")!)
        #expect(response.status == 200)
        let body = try JSONSerialization.jsonObject(with: data) as? [String: Any]
        #expect(body?["authenticated"] as? Bool == true)
        #expect(body?["user"] as? String == "user")
        // hidden-basic-auth answers 404 instead of challenging: nothing to answer, nobody asked.
        let (_, hidden) = try await session.data(from: URL(string: httpbin.baseURL + "/hidden-basic-auth/user/passwd")!)
        #expect(hidden.status == 404)
        #expect(delegate.counts.all == [0])
        // Sent at once (--basic), it works.
        let run = try await runSesame([
            "--basic", "-u", "user:passwd", httpbin.baseURL + "/hidden-basic-auth/user/passwd",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.contains("\"authenticated\": true"))
        #expect(run.stderr.contains("may travel unencrypted"))
        // Over http, without the opt-in, the session refuses to send the password.
        let strict = self.session(delegate: Answer(Credential(user: "user", password: "passwd", persistence: .none)))
        await #expect(throws: SesameError.self) {
            _ = try await strict.data(from: URL(string: httpbin.baseURL + "/basic-auth/user/passwd")!)
        }
    }
}
