import FoundationEssentials
import Sesame
import SesameTesting

/// The demo's HTTP authentication steps: Basic answered by the seeds' Listing 4-1, Digest, and
/// the failure limit.
enum DemoPasswordSteps {
    /// Answers with the seeds' Listing 4-1 logic: a credential the first time, cancel after a
    /// failure. With `cancelsAfterAFailure` false it keeps answering, to show the failure limit.
    final class Listing41: SessionTaskDelegate {
        let credential: Credential
        let demo: DemoContext
        let cancelsAfterAFailure: Bool
        init(_ credential: Credential, _ demo: DemoContext, cancelsAfterAFailure: Bool = true) {
            self.credential = credential
            self.demo = demo
            self.cancelsAfterAFailure = cancelsAfterAFailure
        }

        func session(
            _ session: Session,
            didReceive challenge: AuthenticationChallenge,
            completionHandler: @escaping @Sendable (Session.AuthChallengeDisposition, Credential?) -> Void
        ) {
            guard challenge.protectionSpace.authenticationMethod != .serverTrust else {
                return completionHandler(.performDefaultHandling, nil)
            }
            demo.say("delegate: \(challenge.protectionSpace), previousFailureCount=\(challenge.previousFailureCount)")
            guard challenge.previousFailureCount == 0 || !cancelsAfterAFailure else {
                completionHandler(.cancelAuthenticationChallenge, nil)
                return
            }
            completionHandler(.useCredential, credential)
        }
    }

    static func basic(_ demo: DemoContext) async throws {
        let gate = BasicAuthGate(realm: "Sesame Demo", users: ["ada": "123£"])
        var configuration = LocalServer.Configuration(identity: try demo.pki.leaf())
        configuration.handler = { request in gate.check(request) ?? .text("hello \(gate.user(request) ?? "?")") }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let delegate = Listing41(Credential(user: "ada", password: "123£", persistence: .forSession), demo)
        let session = demo.session(delegate: delegate)
        for path in ["/reports/1", "/reports/2"] {
            let (data, response) = try await session.data(from: try demo.url(port: server.port, path: path))
            demo.say("GET \(path): \(response.status) \(String(decoding: data, as: UTF8.self))")
            try expect(response.status == 200, "status \(response.status)")
        }
        demo.say("requests the server saw: \(server.requests.count) (401 + 200, then 200 at once: preemptive)")
        try expect(server.requests.count == 3, "\(server.requests.count) requests")

        // A wrong password: Listing 4-1 cancels at previousFailureCount 1.
        let wrong = demo.session(
            delegate: Listing41(Credential(user: "ada", password: "nope", persistence: .none), demo)
        )
        do {
            _ = try await wrong.data(from: try demo.url(port: server.port, path: "/reports/1"))
            throw DemoFailure("a wrong password was accepted")
        } catch let error as SesameError {
            demo.say("wrong password: \(error)")
            try expect(error.code == .authenticationCancelled, "wrong error \(error)")
        }
    }

    static func digest(_ demo: DemoContext) async throws {
        var options = DigestAuthGate.Options()
        options.algorithm = "SHA-256"
        options.otherChallenges = ["Basic realm=\"Sesame Digest\""]
        let gate = try DigestAuthGate(users: ["ada": "s3cret"], options: options)
        var configuration = LocalServer.Configuration(identity: try demo.pki.leaf())
        configuration.handler = { request in gate.respond(request) }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let session = demo.session(
            delegate: Listing41(Credential(user: "ada", password: "s3cret", persistence: .forSession), demo)
        )
        for path in ["/a/1", "/a/2", "/a/3"] {
            let (data, response) = try await session.data(from: try demo.url(port: server.port, path: path))
            let info =
                response.headers["Authentication-Info"].map { " (Authentication-Info checked: \($0.prefix(40))…)" }
                ?? ""
            demo.say("GET \(path): \(response.status) \(String(decoding: data, as: UTF8.self))\(info)")
            try expect(response.status == 200, "status \(response.status)")
        }
        let counts = server.requests.compactMap { $0.headers["authorization"] }.compactMap {
            AuthChallengeParser.parse($0).challenges.first?.parameter("nc")
        }
        demo.say(
            "Digest chosen over Basic; nonce counts sent: \(counts.joined(separator: ", ")) — one round trip after the first"
        )
        try expect(server.requests.count == 4, "\(server.requests.count) requests")
    }

    static func wrongPassword(_ demo: DemoContext) async throws {
        let gate = BasicAuthGate(realm: "Sesame Demo", users: ["ada": "right"])
        var configuration = LocalServer.Configuration(identity: try demo.pki.leaf())
        configuration.handler = { request in gate.check(request) ?? .text("hello") }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let delegate = DemoPasswordSteps.Listing41(
            Credential(user: "ada", password: "wrong", persistence: .none),
            demo,
            cancelsAfterAFailure: false
        )
        let session = demo.session(delegate: delegate)
        let (_, response) = try await session.data(from: try demo.url(port: server.port, path: "/"))
        demo.say(
            "after \(server.requests.count) requests the 401 is delivered: the session stops asking at the failure limit (\(session.configuration.maximumAuthenticationFailures))"
        )
        try expect(response.status == 401, "status \(response.status)")
        try expect(server.requests.count == 4, "\(server.requests.count) requests (1 + 3 attempts expected)")
    }
}
