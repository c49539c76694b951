import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// OCSP responses stapled by a live server, checked after the trust decision and before any byte.
@Suite struct StapledOCSPTests {
    func server(
        _ leaf: TestIssuedCertificate,
        staple: Data?,
        version: TLSConfiguration.ProtocolVersion
    ) throws -> LocalServer {
        var configuration = LocalServer.Configuration(identity: leaf)
        configuration.stapledOCSPResponse = staple
        configuration.minimumVersion = version
        configuration.maximumVersion = version
        return try LocalServer(configuration)
    }

    func client(_ tag: String, policy: StapledOCSPPolicy = .enforceWhenPresent) -> TLSConfiguration {
        var configuration = trustingTestRoot()
        configuration.stapledOCSP = policy
        configuration.applicationProtocols = ["sesame-ocsp-\(tag)"]  // a session cache of its own
        return configuration
    }

    @Test(arguments: [TLSConfiguration.ProtocolVersion.tls12, .tls13])
    func aGoodStapleIsVerifiedAndReported(version: TLSConfiguration.ProtocolVersion) async throws {
        let leaf = try sharedPKI.leaf()
        let tlsServer = try server(leaf, staple: try sharedPKI.ocspResponse(for: leaf), version: version)
        defer { tlsServer.shutdown() }
        let connection = try await Connection.connect(
            host: "localhost",
            port: tlsServer.port,
            tls: client("good-\(version)")
        )
        #expect(try await exchange(connection).hasPrefix("hello"))
        await connection.close()
        #expect(connection.tlsInfo?.stapledOCSPStatus?.status == .good)
    }

    @Test(arguments: [TLSConfiguration.ProtocolVersion.tls12, .tls13])
    func aRevokedStapleFailsTheConnectionBeforeAnyByte(version: TLSConfiguration.ProtocolVersion) async throws {
        let leaf = try sharedPKI.leaf()
        let staple = try sharedPKI.ocspResponse(for: leaf, answer: .revoked(at: sharedPKI.now - 60))
        let tlsServer = try server(leaf, staple: staple, version: version)
        defer { tlsServer.shutdown() }
        // Even a delegate that accepts the chain does not get past a staple that says revoked.
        let hooks = TLSHandshakeHooks(serverTrust: { _ in true })
        let error = await #expect(throws: SesameError.self) {
            _ = try await Connection.connect(
                host: "localhost",
                port: tlsServer.port,
                tls: client("revoked-\(version)"),
                hooks: hooks
            )
        }
        #expect(error?.code == .serverTrustRejected)
        #expect(error?.detail.contains("revoked") == true, "\(String(describing: error))")
        // Once the server saw the connection end, it has counted every byte it got.
        let ended = await tlsServer.finishedConnections(atLeast: 1)
        #expect(!ended.isEmpty && ended.allSatisfy { $0.applicationBytesReceived == 0 })
    }

    @Test func aStapleSignedByTheWrongKeyFails() async throws {
        let leaf = try sharedPKI.leaf()
        let tlsServer = try server(leaf, staple: try sharedPKI.ocspResponse(for: leaf, signer: leaf), version: .tls12)
        defer { tlsServer.shutdown() }
        let error = await #expect(throws: SesameError.self) {
            _ = try await Connection.connect(host: "localhost", port: tlsServer.port, tls: client("forged"))
        }
        #expect(error?.code == .serverTrustRejected)
        #expect(error?.detail.contains("signature") == true, "\(String(describing: error))")
    }

    @Test func ignoringStaplesLetsARevokedStapleThrough() async throws {
        let leaf = try sharedPKI.leaf()
        let staple = try sharedPKI.ocspResponse(for: leaf, answer: .revoked(at: sharedPKI.now - 60))
        let tlsServer = try server(leaf, staple: staple, version: .tls13)
        defer { tlsServer.shutdown() }
        let connection = try await Connection.connect(
            host: "localhost",
            port: tlsServer.port,
            tls: client("ignore", policy: .ignore)
        )
        #expect(try await exchange(connection).hasPrefix("hello"))
        await connection.close()
        #expect(connection.tlsInfo?.stapledOCSPStatus == nil)
    }

    @Test func aMissingStapleFailsOnlyWhenRequiredOrMustStaple() async throws {
        let plainLeaf = try sharedPKI.leaf()
        let plain = try server(plainLeaf, staple: nil, version: .tls13)
        defer { plain.shutdown() }
        let connection = try await Connection.connect(host: "localhost", port: plain.port, tls: client("absent"))
        await connection.close()

        let required = await #expect(throws: SesameError.self) {
            _ = try await Connection.connect(
                host: "localhost",
                port: plain.port,
                tls: client("required", policy: .require)
            )
        }
        #expect(required?.detail.contains("requires") == true, "\(String(describing: required))")

        let mustStaple = try server(try sharedPKI.leaf(mustStaple: true), staple: nil, version: .tls12)
        defer { mustStaple.shutdown() }
        let marked = await #expect(throws: SesameError.self) {
            _ = try await Connection.connect(host: "localhost", port: mustStaple.port, tls: client("must-staple"))
        }
        #expect(marked?.detail.contains("must-staple") == true, "\(String(describing: marked))")
    }

    @Test func aRevokedServerIsNotResumedLater() async throws {
        let leaf = try sharedPKI.leaf()
        let staple = try sharedPKI.ocspResponse(for: leaf, answer: .revoked(at: sharedPKI.now - 60))
        let tlsServer = try server(leaf, staple: staple, version: .tls12)
        defer { tlsServer.shutdown() }
        let configuration = client("no-resume")
        for _ in 0..<2 {
            await #expect(throws: SesameError.self) {
                _ = try await Connection.connect(host: "localhost", port: tlsServer.port, tls: configuration)
            }
        }
        #expect(tlsServer.connections.allSatisfy { !$0.sessionReused })
    }
}
