import Foundation
import Testing

@testable import Sesame
import SesameTesting

@Suite struct TLSConnectionTests {
    @Test(arguments: [TLSConfiguration.ProtocolVersion.tls12, .tls13])
    func handshakeWithPrivateAnchorCompletesARequest(version: TLSConfiguration.ProtocolVersion) async throws {
        var server = LocalTLSServer.Configuration(identity: try sharedPKI.leaf())
        server.minimumVersion = version
        server.maximumVersion = version
        let tlsServer = try LocalTLSServer(server)
        defer { tlsServer.shutdown() }

        let connection = try await TLSConnection.connect(host: "localhost", port: tlsServer.port, configuration: trustingTestRoot())
        let body = try await exchange(connection)
        await connection.close()

        #expect(body.contains("client: none"))
        #expect(connection.info.protocolVersion == version.description)
        #expect(connection.info.peerChain.first?.subject.commonName == "localhost")
        #expect(connection.info.peerChain.count == 2)
    }
}
