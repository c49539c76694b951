import Foundation
import SesameTesting
import Testing

@testable import Sesame

@Suite struct SessionResumptionTests {
    /// Sessions are kept by host and port, and each test's server has a port and ticket keys of its
    /// own, so one test's sessions never resume against another's server. The ALPN tag gives each
    /// test a TLS context of its own as well (contexts that differ only in ALPN share sessions).
    func configuration(_ tag: String) -> TLSConfiguration {
        var configuration = trustingTestRoot()
        configuration.applicationProtocols = ["sesame-\(tag)"]
        return configuration
    }

    @Test(arguments: [TLSConfiguration.ProtocolVersion.tls12, .tls13])
    func aResumedSessionIsRefusedWhenTheDecisionIsNowReject(version: TLSConfiguration.ProtocolVersion) async throws {
        var server = LocalServer.Configuration(identity: try sharedPKI.leaf())
        server.minimumVersion = version
        server.maximumVersion = version
        let tlsServer = try LocalServer(server)
        defer { tlsServer.shutdown() }
        let configuration = configuration("reject-\(version)")
        let requests = Recorder<ServerTrust>()
        let accept = TLSHandshakeHooks(serverTrust: { request in
            requests.append(request)
            return true
        })
        let reject = TLSHandshakeHooks(serverTrust: { request in
            requests.append(request)
            return false
        })

        let first = try await Connection.connect(
            host: "localhost",
            port: tlsServer.port,
            tls: configuration,
            hooks: accept
        )
        _ = try await exchange(first)  // TLS 1.3 tickets arrive with the first read
        await first.close()
        #expect(first.tlsInfo?.isSessionReused == false)

        let second = try await Connection.connect(
            host: "localhost",
            port: tlsServer.port,
            tls: configuration,
            hooks: accept
        )
        _ = try await exchange(second)
        await second.close()
        #expect(second.tlsInfo?.isSessionReused == true)

        let error = await #expect(throws: SesameError.self) {
            _ = try await Connection.connect(
                host: "localhost",
                port: tlsServer.port,
                tls: configuration,
                hooks: reject
            )
        }
        #expect(error?.code == .serverTrustRejected)
        #expect(requests.all.map(\.isResumedSession) == [false, true, true])
        #expect(requests.all.last?.peerChain.first?.subject.commonName == "localhost")
        let records = await tlsServer.finishedConnections(atLeast: 3)
        #expect(records.count == 3)
        #expect(records[2].sessionReused)
        #expect(records[2].applicationBytesReceived == 0)
    }

    /// An origin's first connection offers `h2, http/1.1`; once the origin answered `http/1.1`, its
    /// further connections offer `http/1.1` alone. They resume the first one's session: a session
    /// is not bound to the ALPN list offered.
    @Test(arguments: [TLSConfiguration.ProtocolVersion.tls12, .tls13])
    func http1ConnectionsResumeTheSessionOfTheConnectionThatOfferedHTTP2(
        version: TLSConfiguration.ProtocolVersion
    ) async throws {
        var configuration = LocalServer.Configuration(identity: try sharedPKI.leaf())
        configuration.minimumVersion = version
        configuration.maximumVersion = version
        configuration.applicationProtocols = ["http/1.1"]
        configuration.handler = { _ in .text("ok", headers: [("Connection", "close")]) }
        let origin = try LocalServer(configuration)
        defer { origin.shutdown() }
        let session = testSession { $0.httpVersion = .http2 }
        for _ in 0..<3 {
            let (_, response) = try await session.data(from: url(origin, "/"))
            #expect(response.status == 200)
            #expect(response.version == "HTTP/1.1")
        }
        let records = await origin.finishedConnections(atLeast: 3)
        #expect(records.map(\.applicationProtocol) == ["http/1.1", "http/1.1", "http/1.1"])
        #expect(records.map(\.sessionReused) == [false, true, true])
    }

    /// Contexts share sessions and trust evaluations across ALPN lists, never across trust roots
    /// or versions (a session trusted under one set of roots must not skip another's judgement).
    @Test func contextsShareSessionsOnlyWhereTheRootsAndVersionsAreTheSame() throws {
        let first = configuration("scope-a")
        var second = configuration("scope-b")
        second.applicationProtocols.append("http/1.1")
        let a = try TLSContext.shared(for: first)
        let b = try TLSContext.shared(for: second)
        #expect(a !== b)
        #expect(a.sessions === b.sessions)
        #expect(a.trustEvaluations === b.trustEvaluations)

        var otherRoots = second
        otherRoots.trustRoots = .anchors([sharedPKI.untrustedRoot.certificate])
        var otherVersions = second
        otherVersions.minimumVersion = .tls13
        for other in [otherRoots, otherVersions] {
            let c = try TLSContext.shared(for: other)
            #expect(c.sessions !== a.sessions)
            #expect(c.trustEvaluations !== a.trustEvaluations)
        }
    }

    @Test func sessionsWithAClientCertificateAreNotResumed() async throws {
        var server = LocalServer.Configuration(identity: try sharedPKI.leaf())
        server.clientAuthentication = .required(trusting: [sharedPKI.clientCA.certificate])
        let tlsServer = try LocalServer(server)
        defer { tlsServer.shutdown() }
        let identity = try sharedPKI.clientCertificate().identity()
        let hooks = TLSHandshakeHooks(clientCertificate: { _ in identity })
        let configuration = configuration("mtls")
        for _ in 0..<2 {
            let connection = try await Connection.connect(
                host: "localhost",
                port: tlsServer.port,
                tls: configuration,
                hooks: hooks
            )
            _ = try await exchange(connection)
            await connection.close()
            #expect(connection.tlsInfo?.isSessionReused == false)
        }
    }

    @Test func resumptionCanBeTurnedOff() async throws {
        let tlsServer = try LocalServer(.init(identity: try sharedPKI.leaf()))
        defer { tlsServer.shutdown() }
        var configuration = configuration("off")
        configuration.sessionResumption = false
        for _ in 0..<2 {
            let connection = try await Connection.connect(
                host: "localhost",
                port: tlsServer.port,
                tls: configuration
            )
            _ = try await exchange(connection)
            await connection.close()
            #expect(connection.tlsInfo?.isSessionReused == false)
        }
    }
}
