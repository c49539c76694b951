import Foundation
import SesameTesting
import Testing

@testable import Sesame

@Suite struct ClientCertificateHandshakeTests {
    static let versions: [TLSConfiguration.ProtocolVersion] = [.tls12, .tls13]

    func mutualTLSServer(
        version: TLSConfiguration.ProtocolVersion,
        required: Bool = true
    ) throws -> LocalServer {
        var server = LocalServer.Configuration(identity: try sharedPKI.leaf())
        server.minimumVersion = version
        server.maximumVersion = version
        let trusted = [sharedPKI.clientCA.certificate]
        server.clientAuthentication = required ? .required(trusting: trusted) : .optional(trusting: trusted)
        return try LocalServer(server)
    }

    @Test(arguments: versions)
    func theCallbackSeesTheServersCANamesAndTheServerSeesTheChosenCertificate(
        version: TLSConfiguration.ProtocolVersion
    ) async throws {
        let tlsServer = try mutualTLSServer(version: version)
        defer { tlsServer.shutdown() }
        let client = try sharedPKI.clientCertificate(commonName: "alice")
        let identity = try client.identity()
        let requests = Recorder<ClientCertificateRequest>()
        let order = Recorder<String>()
        let hooks = TLSHandshakeHooks(
            serverTrust: { request in
                order.append("trust")
                return request.evaluate().isTrusted
            },
            clientCertificate: { request in
                order.append("client certificate")
                requests.append(request)
                return identity
            }
        )
        let connection = try await Connection.connect(
            host: "localhost",
            port: tlsServer.port,
            tls: trustingTestRoot(),
            hooks: hooks
        )
        let body = try await exchange(connection)
        await connection.close()

        #expect(order.all == ["trust", "client certificate"])
        #expect(requests.all.first?.acceptableIssuers == [sharedPKI.clientCA.certificate.subject])
        #expect(body.contains("CN=alice"))
        #expect(connection.tlsInfo?.clientCertificate == client.certificate)
        let record = try #require(await tlsServer.finishedConnections(atLeast: 1).first)
        #expect(record.clientCertificateSubject?.contains("CN=alice") == true)
    }

    @Test func anIdentityWithAnIntermediateSendsItsChain() async throws {
        // A client certificate issued by an intermediate under the client CA: the server only
        // trusts the client CA, so it needs the intermediate from the client.
        let pki = sharedPKI
        var server = LocalServer.Configuration(identity: try pki.leaf())
        server.clientAuthentication = .required(trusting: [pki.root.certificate])
        let tlsServer = try LocalServer(server)
        defer { tlsServer.shutdown() }
        let client = try pki.clientCertificate(commonName: "bob", issuer: pki.intermediate)
        let identity = try client.identity()
        #expect(identity.intermediates == [pki.intermediate.certificate])
        let hooks = TLSHandshakeHooks(clientCertificate: { _ in identity })
        let connection = try await Connection.connect(
            host: "localhost",
            port: tlsServer.port,
            tls: trustingTestRoot(),
            hooks: hooks
        )
        let body = try await exchange(connection)
        await connection.close()
        #expect(body.contains("CN=bob"))
    }

    @Test func tls12WithoutACertificateFailsInTheHandshake() async throws {
        let tlsServer = try mutualTLSServer(version: .tls12)
        defer { tlsServer.shutdown() }
        let error = await #expect(throws: SesameError.self) {
            _ = try await Connection.connect(
                host: "localhost",
                port: tlsServer.port,
                tls: trustingTestRoot()
            )
        }
        #expect(error?.code == .clientCertificateRequired)
    }

    @Test func tls13WithoutACertificateFailsOnTheFirstRead() async throws {
        let tlsServer = try mutualTLSServer(version: .tls13)
        defer { tlsServer.shutdown() }
        let connection = try await Connection.connect(
            host: "localhost",
            port: tlsServer.port,
            tls: trustingTestRoot()
        )
        let error = await #expect(throws: SesameError.self) { _ = try await exchange(connection) }
        #expect(error?.code == .clientCertificateRequired)
        let record = try #require(await tlsServer.finishedConnections(atLeast: 1).first)
        #expect(record.requestHeads.isEmpty)
    }

    @Test(arguments: versions)
    func anUntrustedClientCertificateIsRejected(version: TLSConfiguration.ProtocolVersion) async throws {
        let tlsServer = try mutualTLSServer(version: version)
        defer { tlsServer.shutdown() }
        let rogue = try sharedPKI.clientCertificate(commonName: "rogue", issuer: sharedPKI.untrustedRoot).identity()
        let hooks = TLSHandshakeHooks(clientCertificate: { _ in rogue })
        let error = await #expect(throws: SesameError.self) {
            let connection = try await Connection.connect(
                host: "localhost",
                port: tlsServer.port,
                tls: trustingTestRoot(),
                hooks: hooks
            )
            _ = try await exchange(connection)
        }
        #expect(error?.code == .clientCertificateRejected)
    }

    @Test func optionalClientAuthenticationAcceptsNoCertificate() async throws {
        let tlsServer = try mutualTLSServer(version: .tls13, required: false)
        defer { tlsServer.shutdown() }
        let asked = Recorder<ClientCertificateRequest>()
        let hooks = TLSHandshakeHooks(clientCertificate: { request in
            asked.append(request)
            return nil
        })
        let connection = try await Connection.connect(
            host: "localhost",
            port: tlsServer.port,
            tls: trustingTestRoot(),
            hooks: hooks
        )
        let body = try await exchange(connection)
        await connection.close()
        #expect(asked.all.count == 1)
        #expect(body.contains("client: none"))
    }
}
