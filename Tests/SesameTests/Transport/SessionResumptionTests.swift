import Foundation
import SesameTesting
import Testing

@testable import Sesame

@Suite struct SessionResumptionTests {
    /// Each test uses its own ALPN list so that its TLS context (and session cache) is its own.
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
