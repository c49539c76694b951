import Foundation
import Sesame
import SesameTesting
import Testing

/// The README's example, run against a local server (the README points at example.test).
@Suite struct ReadmeExampleTests {
    @Test func theReadmeExampleWorks() async throws {
        let pki = sharedPKI
        let leaf = try pki.selfSignedLeaf()
        let origin = try LocalServer(.init(identity: leaf))
        defer { origin.shutdown() }
        let directory = try temporaryDirectory()
        try Data(pki.root.certificatePEM.utf8).write(to: directory.appendingPathComponent("ca.pem"))
        try leaf.certificate.derEncoded.write(to: directory.appendingPathComponent("server.cer"))
        let caPath = directory.appendingPathComponent("ca.pem").path
        let serverPath = directory.appendingPathComponent("server.cer").path
        let address = origin.baseURL + "/"

        // From README.md, with the paths and URL above.
        var configuration = SessionConfiguration.default
        configuration.tls.trustRoots = .anchors(try Certificate.load(contentsOf: caPath))
        let bundled = try Certificate.load(contentsOf: serverPath)
        configuration.handshakeHooks.serverTrust = { request in
            request.peerChain.first.map(bundled.contains) ?? false
        }
        let session = Session(configuration: configuration)
        let (data, response) = try await session.data(from: URL(string: address)!)
        print(response.status, data.count)

        #expect(response.status == 200)
    }

    @Test func theReadmeChallengeExamplesWork() async throws {
        let gate = BasicAuthGate(realm: "API", users: ["ada": "s3cret"])
        var serverConfiguration = LocalServer.Configuration.plainHTTP
        serverConfiguration.handler = { request in gate.check(request) ?? .text("hello") }
        let origin = try LocalServer(serverConfiguration)
        defer { origin.shutdown() }
        var configuration = SessionConfiguration.default
        configuration.allowsCleartextPasswords = true  // the local server is plain http
        configuration.credentialStorage = CredentialStorage()
        let session = Session(configuration: configuration, delegate: Login())
        let (data, _) = try await session.data(from: URL(string: origin.baseURL + "/")!)
        #expect(String(decoding: data, as: UTF8.self) == "hello")

        // The pre-seeded storage, in a private file instead of the shared one.
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let storage = CredentialStorage(fileURL: directory.appendingPathComponent("credentials.json"))
        let space = ProtectionSpace(
            host: "localhost",
            port: origin.port,
            protocol: "http",
            realm: "API",
            authenticationMethod: .httpBasic
        )
        try storage.setDefaultCredential(
            Credential(user: "ada", password: "s3cret", persistence: .permanent),
            for: space
        )
        configuration.credentialStorage = storage
        let (seeded, _) = try await Session(configuration: configuration).data(from: URL(string: origin.baseURL + "/")!)
        #expect(String(decoding: seeded, as: UTF8.self) == "hello")
    }

    @Test func theReadmePortedSeedDelegateWorks() async throws {
        let leaf = try sharedPKI.selfSignedLeaf()
        let gate = BasicAuthGate(realm: "API", users: ["ada": "s3cret"])
        var server = LocalServer.Configuration(identity: leaf)
        server.clientAuthentication = .required(trusting: [sharedPKI.clientCA.certificate])
        server.handler = { request in
            gate.check(request) ?? .text("hello \(request.clientCertificateSubject ?? "nobody")")
        }
        let origin = try LocalServer(server)
        defer { origin.shutdown() }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let certificateFile = directory.appendingPathComponent("server.cer")
        try leaf.certificate.derEncoded.write(to: certificateFile)
        let p12 = directory.appendingPathComponent("client.p12")
        try sharedPKI.clientCertificate(commonName: "seed").pkcs12(password: "secret").write(to: p12)
        let delegate = try SeedDelegate(certificateFile: certificateFile.path, pkcs12File: p12.path, password: "secret")
        var configuration = SessionConfiguration.default
        configuration.credentialStorage = CredentialStorage()
        configuration.proxy = .none
        let session = Session(configuration: configuration, delegate: delegate)
        let (data, response) = try await session.data(from: URL(string: origin.baseURL + "/")!)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self).contains("CN=seed"))
        // Another server's certificate is not the bundled one: cancelled, nothing sent.
        let other = try LocalServer(.init(identity: try sharedPKI.selfSignedLeaf()))
        defer { other.shutdown() }
        await #expect(throws: SesameError.self) { _ = try await session.data(from: URL(string: other.baseURL)!) }
        #expect(other.connections.allSatisfy { $0.applicationBytesReceived == 0 })
    }
}
