import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// The TLS client against `openssl s_server` on loopback: TLS 1.2-only and 1.3-only, with and
/// without `-Verify` (required client certificates).
@Suite(.serialized) struct OpenSSLServerInteropTests {
    static let pki: TestPKI = {
        try! TestPKI()  // safe: nothing can be tested without it
    }()

    var configuration: TLSConfiguration {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.trustRoots = .anchors([Self.pki.root.certificate])
        return configuration
    }

    /// `s_server -www` answers an HTTP/1.0 request with a status page and closes.
    func fetchStatusPage(_ connection: Connection) async throws -> String {
        try await connection.write(Array("GET / HTTP/1.0\r\n\r\n".utf8))
        var received: [UInt8] = []
        while true {
            let chunk = try await connection.read()
            if chunk.isEmpty { break }
            received += chunk
        }
        return String(decoding: received, as: UTF8.self)
    }

    @Test(arguments: [OpenSSLServer.Version.tls12, .tls13])
    func aSuspendedTrustDecisionCompletesAgainstSServer(version: OpenSSLServer.Version) async throws {
        let server = try await OpenSSLServer(pki: Self.pki, version: version, requireClientCertificate: false)
        defer { server.stop() }
        let hooks = TLSHandshakeHooks(serverTrust: { request in
            // A decision that takes a while, as a person asked would: s_server's later handshake
            // bytes arrive while the handshake is held, and are read once it goes on.
            try? await Task.sleep(for: .milliseconds(200))
            return request.evaluate().isTrusted
        })
        let connection = try await Connection.connect(
            host: "localhost",
            port: server.port,
            tls: configuration,
            hooks: hooks
        )
        let page = try await fetchStatusPage(connection)
        await connection.close()
        #expect(page.hasPrefix("HTTP/1.0 200 ok"))
        #expect(connection.tlsInfo?.protocolVersion == (version == .tls12 ? "TLSv1.2" : "TLSv1.3"))
    }

    @Test(arguments: [OpenSSLServer.Version.tls12, .tls13])
    func aClientCertificateSatisfiesVerify(version: OpenSSLServer.Version) async throws {
        let server = try await OpenSSLServer(pki: Self.pki, version: version, requireClientCertificate: true)
        defer { server.stop() }
        let identity = try Self.pki.clientCertificate(commonName: "interop-client").identity()
        let requests = Recorder<ClientCertificateRequest>()
        let hooks = TLSHandshakeHooks(clientCertificate: { request in
            requests.append(request)
            return identity
        })
        let connection = try await Connection.connect(
            host: "localhost",
            port: server.port,
            tls: configuration,
            hooks: hooks
        )
        let page = try await fetchStatusPage(connection)
        await connection.close()
        #expect(page.hasPrefix("HTTP/1.0 200 ok"))
        #expect(requests.all.first?.acceptableIssuers == [Self.pki.clientCA.certificate.subject])
        #expect(server.log.contains("CN = interop-client"), "\(server.log)")
    }

    @Test(arguments: [OpenSSLServer.Version.tls12, .tls13])
    func noClientCertificateIsTheRequiredError(version: OpenSSLServer.Version) async throws {
        let server = try await OpenSSLServer(pki: Self.pki, version: version, requireClientCertificate: true)
        defer { server.stop() }
        let error = await #expect(throws: SesameError.self) {
            let connection = try await Connection.connect(
                host: "localhost",
                port: server.port,
                tls: configuration
            )
            _ = try await fetchStatusPage(connection)
        }
        #expect(error?.code == .clientCertificateRequired, "\(String(describing: error))")
    }

    @Test func anUntrustedClientCertificateIsTheRejectedError() async throws {
        let server = try await OpenSSLServer(pki: Self.pki, version: .tls12, requireClientCertificate: true)
        defer { server.stop() }
        let rogue = try Self.pki.clientCertificate(commonName: "rogue", issuer: Self.pki.untrustedRoot).identity()
        let error = await #expect(throws: SesameError.self) {
            _ = try await Connection.connect(
                host: "localhost",
                port: server.port,
                tls: configuration,
                hooks: TLSHandshakeHooks(clientCertificate: { _ in rogue })
            )
        }
        #expect(error?.code == .clientCertificateRejected, "\(String(describing: error))")
    }
}
