import FoundationEssentials
import Sesame
import SesameTesting

/// The demo's proxy step: an authenticating HTTPS proxy, CONNECT, TLS inside TLS.
enum DemoProxySteps {
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
}
