import FoundationEssentials
import Glibc
import Sesame
import SesameTesting

/// The demo's client-certificate step (mutual TLS through a session delegate).
enum DemoClientCertificateSteps {
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
        let session = demo.session(delegate: delegate)
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
}
