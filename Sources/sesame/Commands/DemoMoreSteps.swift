import Foundation
import Sesame
import SesameTesting

/// The demo's steps for bounded failures, client certificates through a session, an
/// authenticating CONNECT proxy, and a permanent credential kept between runs.
enum DemoMoreSteps {
    static func wrongPassword(_ demo: DemoContext) async throws {
        let gate = BasicAuthGate(realm: "Sesame Demo", users: ["ada": "right"])
        var configuration = LocalServer.Configuration(identity: try demo.pki.leaf())
        configuration.handler = { request in gate.check(request) ?? .text("hello") }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let delegate = DemoChallengeSteps.Listing41(
            Credential(user: "ada", password: "wrong", persistence: .none),
            demo,
            cancelsAfterAFailure: false
        )
        let session = DemoChallengeSteps.makeSession(demo, delegate: delegate)
        let (_, response) = try await session.data(from: try demo.url(port: server.port, path: "/"))
        demo.say(
            "after \(server.requests.count) requests the 401 is delivered: the session stops asking at the failure limit (\(session.configuration.maximumAuthenticationFailures))"
        )
        try expect(response.status == 401, "status \(response.status)")
        try expect(server.requests.count == 4, "\(server.requests.count) requests (1 + 3 attempts expected)")
    }

    /// The seeds' 002 shape at session level: a client-certificate challenge answered with an
    /// identity from PKCS#12, remembered for the next connection.
    final class IdentityDelegate: SessionTaskDelegate {
        let identity: Identity
        let demo: DemoContext
        let asked = LockedValue(0)
        init(_ identity: Identity, _ demo: DemoContext) {
            self.identity = identity
            self.demo = demo
        }

        func session(
            _ session: Session,
            didReceive challenge: AuthenticationChallenge
        ) async -> (AuthChallengeDisposition, Credential?) {
            guard challenge.protectionSpace.authenticationMethod == .clientCertificate else {
                return (.performDefaultHandling, nil)
            }
            asked.withLock { $0 += 1 }
            let issuers = challenge.protectionSpace.distinguishedNames?.map(\.description) ?? []
            demo.say("delegate asked for a client certificate; acceptable issuers: \(issuers)")
            return (.useCredential, Credential(identity: identity, persistence: .forSession))
        }
    }

    static func clientCertificate(_ demo: DemoContext) async throws {
        var configuration = LocalServer.Configuration(identity: try demo.pki.leaf())
        configuration.clientAuthentication = .required(trusting: [demo.pki.clientCA.certificate])
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let p12Path = demo.directory.appendingPathComponent("client.p12").path
        try demo.pki.clientCertificate(commonName: "demo-client").pkcs12(password: "demo-pass")
            .write(to: URL(fileURLWithPath: p12Path))
        let identity = try Identity.load(pkcs12File: p12Path, password: "demo-pass")
        demo.say("loaded \(identity) from PKCS#12")
        let delegate = IdentityDelegate(identity, demo)
        let session = DemoChallengeSteps.makeSession(demo, delegate: delegate)
        let url = try demo.url(port: server.port, path: "/")
        let (first, _) = try await session.data(from: url)
        session.closeIdleConnections()
        let (second, _) = try await session.data(from: url)
        for body in [first, second] {
            let line = String(decoding: body, as: UTF8.self).split(separator: "\n").dropFirst().first ?? ""
            demo.say("server saw: \(line)")
            try expect(line.contains("CN=demo-client"), "the server did not see the client certificate")
        }
        let asked = delegate.asked.withLock { $0 }
        demo.say("two connections, delegate asked \(asked) time(s): the identity is remembered for the session")
        try expect(
            asked == 1 && server.connections.count == 2,
            "asked \(asked), \(server.connections.count) connections"
        )
    }

    /// Answers the proxy's 407 (and lets default handling take the server trust).
    final class ProxyLogin: SessionTaskDelegate {
        let demo: DemoContext
        init(_ demo: DemoContext) { self.demo = demo }
        func session(
            _ session: Session,
            task: SessionTask,
            didReceive challenge: AuthenticationChallenge
        ) async -> (AuthChallengeDisposition, Credential?) {
            let space = challenge.protectionSpace
            guard space.isProxy else { return (.performDefaultHandling, nil) }
            demo.say("delegate asked by the proxy: \(space) (isProxy, proxyType \(space.proxyType ?? "?"))")
            return (.useCredential, Credential(user: "proxy-user", password: "proxy-pass", persistence: .forSession))
        }
    }

    static func proxy(_ demo: DemoContext) async throws {
        let origin = try LocalServer(.init(identity: try demo.pki.leaf()))
        defer { origin.shutdown() }
        // A proxy over TLS that wants Digest-less Basic credentials before it opens a tunnel.
        let expected = "Basic " + Data("proxy-user:proxy-pass".utf8).base64EncodedString()
        var proxyConfiguration = LocalServer.Configuration(identity: try demo.pki.leaf())
        let originPort = origin.port
        proxyConfiguration.handler = { request in
            guard request.headers["Proxy-Authorization"] == expected else {
                return .text(
                    "credentials please",
                    status: 407,
                    headers: [("Proxy-Authenticate", "Basic realm=\"Demo Proxy\"")]
                )
            }
            return request.method == "CONNECT" ? .tunnel(toPort: originPort) : .text("not a tunnel", status: 400)
        }
        let proxy = try LocalServer(proxyConfiguration)
        defer { proxy.shutdown() }
        var configuration = SessionConfiguration.default
        configuration.tls = demo.privateAnchorConfiguration
        configuration.credentialStorage = CredentialStorage()
        configuration.proxy = ProxyConfiguration(proxy: "https://localhost:\(proxy.port)")
        configuration.eventObserver = { event in
            switch event {
            case .tunnel(let via, let target, let status): demo.say("CONNECT \(target) via \(via): \(status)")
            case .challenge(let trace) where trace.protectionSpace.isProxy: demo.say("challenge \(trace)")
            default: break
            }
        }
        let session = Session(configuration: configuration, delegate: ProxyLogin(demo))
        let (data, response) = try await session.data(from: try demo.url(port: origin.port, path: "/through"))
        let line = String(decoding: data, as: UTF8.self).split(separator: "\n").first ?? ""
        demo.say("origin answered \(response.status) \"\(line)\" through TLS inside the proxy's TLS")
        try expect(response.status == 200, "status \(response.status)")
        let leaked = origin.requests.contains { $0.headers["Proxy-Authorization"] != nil }
        demo.say("Proxy-Authorization seen by the origin: \(leaked ? "yes (wrong!)" : "never")")
        try expect(!leaked, "the origin saw Proxy-Authorization")
    }

    /// The port the permanent step's server prefers, so that a stored credential's protection
    /// space is the same from one run to the next.
    static let permanentPort = 47_321

    static func permanent(_ demo: DemoContext) async throws {
        let gate = BasicAuthGate(realm: "Sesame Demo Permanent", users: ["grace": "cobol"])
        var configuration = LocalServer.Configuration(identity: try demo.pki.leaf())
        configuration.handler = { request in gate.check(request) ?? .text("hello \(gate.user(request) ?? "?")") }
        configuration.port = permanentPort
        let server: LocalServer
        do {
            server = try LocalServer(configuration)
        } catch {
            configuration.port = 0
            server = try LocalServer(configuration)
            demo.say("port \(permanentPort) is busy: this run's credential cannot be found by the next run")
        }
        defer { server.shutdown() }
        let file = Self.permanentStoreURL()
        demo.say("permanent credential store: \(file.path)")
        let url = try demo.url(port: server.port, path: "/profile")
        guard let space = ProtectionSpace(url: url, realm: gate.realm, authenticationMethod: .httpBasic) else {
            throw DemoFailure("no protection space for \(url)")
        }
        let stored = try CredentialStorage(fileURL: file).defaultCredential(for: space)
        if let stored {
            demo.say("found \(stored) from a previous run")
        } else {
            // First run: the delegate answers with a permanent credential, which is stored.
            let delegate = DemoChallengeSteps.Listing41(
                Credential(user: "grace", password: "cobol", persistence: .permanent),
                demo
            )
            let session = permanentSession(demo, file: file, delegate: delegate)
            let (_, response) = try await session.data(from: url)
            try expect(response.status == 200, "status \(response.status)")
            demo.say(
                "stored: \(try CredentialStorage(fileURL: file).defaultCredential(for: space)?.description ?? "nothing")"
            )
        }
        // A new session, as a new process would make, with no delegate at all: the stored
        // credential answers the challenge.
        let fresh = permanentSession(demo, file: file, delegate: nil)
        let (data, response) = try await fresh.data(from: url)
        demo.say("a fresh session without a delegate: \(response.status) \(String(decoding: data, as: UTF8.self))")
        try expect(response.status == 200, "status \(response.status)")
        demo.say("run `sesame demo --step permanent` again: the credential comes from the file at once")
    }

    static func permanentSession(_ demo: DemoContext, file: URL, delegate: (any SessionTaskDelegate)?) -> Session {
        var configuration = SessionConfiguration.default
        configuration.tls = demo.privateAnchorConfiguration
        configuration.credentialStorage = CredentialStorage(fileURL: file)
        configuration.eventObserver = { event in
            if case .challenge(let trace) = event, trace.protectionSpace.authenticationMethod != .serverTrust {
                demo.say("challenge \(trace)")
            }
        }
        return Session(configuration: configuration, delegate: delegate)
    }

    /// `$XDG_DATA_HOME/sesame/demo-credentials.json` (else `~/.local/share/...`): the demo never
    /// touches the real credential store.
    static func permanentStoreURL() -> URL {
        let environment = ProcessInfo.processInfo.environment
        let base =
            environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? FileManager.default.homeDirectoryForCurrentUser.appendingPathComponent(".local/share")
        return base.appendingPathComponent("sesame/demo-credentials.json")
    }
}
