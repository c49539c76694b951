import Foundation
import Sesame
import SesameTesting

/// The demo's authentication and pinning steps, through sessions and delegates.
enum DemoChallengeSteps {
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

    static func makeSession(_ demo: DemoContext, delegate: (any SessionTaskDelegate)?) -> Session {
        var configuration = SessionConfiguration.default
        configuration.tls = demo.privateAnchorConfiguration
        configuration.credentialStorage = CredentialStorage()
        configuration.eventObserver = { event in
            if case .challenge(let trace) = event, trace.protectionSpace.authenticationMethod != .serverTrust {
                demo.say("challenge \(trace)")
            }
        }
        return Session(configuration: configuration, delegate: delegate)
    }

    static func basic(_ demo: DemoContext) async throws {
        let gate = BasicAuthGate(realm: "Sesame Demo", users: ["ada": "123£"])
        var configuration = LocalServer.Configuration(identity: try demo.pki.leaf())
        configuration.handler = { request in gate.check(request) ?? .text("hello \(gate.user(request) ?? "?")") }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let delegate = Listing41(Credential(user: "ada", password: "123£", persistence: .forSession), demo)
        let session = makeSession(demo, delegate: delegate)
        for path in ["/reports/1", "/reports/2"] {
            let (data, response) = try await session.data(from: try demo.url(port: server.port, path: path))
            demo.say("GET \(path): \(response.status) \(String(decoding: data, as: UTF8.self))")
            try expect(response.status == 200, "status \(response.status)")
        }
        demo.say("requests the server saw: \(server.requests.count) (401 + 200, then 200 at once: preemptive)")
        try expect(server.requests.count == 3, "\(server.requests.count) requests")

        // A wrong password: Listing 4-1 cancels at previousFailureCount 1.
        let wrong = makeSession(
            demo,
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
        let session = makeSession(
            demo,
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

    static func pinning(_ demo: DemoContext) async throws {
        let server = try LocalServer(.init(identity: try demo.pki.leaf()))
        defer { server.shutdown() }
        let intermediatePin = "sha256/" + demo.pki.intermediate.certificate.publicKey.sha256Pin
        let backupPin = "sha256/" + Data(repeating: 0x42, count: 32).base64EncodedString()
        let reports = LockedValue<[String]>([])
        let pins = try PinSet(
            [.init(host: "localhost", pins: [intermediatePin, backupPin])],
            report: { report in reports.withLock { $0.append(report.json) } }
        )
        var configuration = SessionConfiguration.default
        configuration.tls = demo.privateAnchorConfiguration
        configuration.serverTrustManager = ServerTrustManager(evaluators: ["localhost": pins])
        let (_, response) = try await Session(configuration: configuration)
            .data(from: try demo.url(port: server.port, path: "/"))
        demo.say("pinned to the intermediate's key \(intermediatePin.prefix(20))…: \(response.status)")
        try expect(response.status == 200, "status \(response.status)")

        // The server rotates to a key from another CA: the same pins refuse it, and a report goes out.
        let rotated = try LocalServer(.init(identity: try demo.pki.untrustedLeaf()))
        defer { rotated.shutdown() }
        var rotatedConfiguration = configuration
        rotatedConfiguration.tls.trustRoots = .anchors([demo.pki.root.certificate, demo.pki.untrustedRoot.certificate])
        do {
            _ = try await Session(configuration: rotatedConfiguration)
                .data(from: try demo.url(port: rotated.port, path: "/"))
            throw DemoFailure("a rotated key passed the pins")
        } catch let error as SesameError {
            demo.say("rotated key: \(error)")
            try expect(error.code == .serverTrustRejected, "wrong error \(error)")
        }
        let report = reports.withLock { $0.last } ?? ""
        demo.say("pin failure report: \(report.prefix(160))…")
        try expect(!report.isEmpty, "no report")
    }
}
