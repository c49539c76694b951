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
}
