import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// `sesame -E/--cert` against nginx requiring client certificates and `openssl s_server -Verify`.
@Suite(.serialized) struct ClientCertificateCommandTests {
    static let pki: TestPKI = {
        try! TestPKI()  // safe: nothing can be tested without it
    }()

    let directory: URL = {
        try! ScratchFolder.make("mtls")  // safe: nothing can be tested without it
    }()

    func write(_ data: Data, _ name: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try data.write(to: url)
        return url.path
    }

    @Test func everyIdentityFormatWorksAgainstNginx() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let root = try write(Data(Self.pki.root.certificatePEM.utf8), "root.pem")
        let client = try Self.pki.clientCertificate(commonName: "cli-client")
        let modern = try write(try client.pkcs12(password: "p12pass"), "client.p12")
        let colonName = try write(try client.pkcs12(password: "p12pass"), "with:colon.p12")
        let legacy = try write(try client.pkcs12(password: "p12pass", legacy: true), "legacy.bin")
        let (pem, key) = try client.write(to: directory, name: "client")
        let encryptedKey = try write(Data(client.encryptedPrivateKeyPEM(password: "keypass").utf8), "enc.key")
        let url = "https://localhost:\(nginx.trustCasePorts["client-certificate"] ?? 0)/"
        let cases: [(String, [String])] = [
            ("PKCS#12", ["-E", "\(modern):p12pass"]),
            ("a colon in the file name", ["-E", colonName.replacingOccurrences(of: ":", with: "\\:") + ":p12pass"]),
            ("legacy PKCS#12", ["--cert", legacy, "--cert-type", "P12", "--pass", "p12pass"]),
            ("PEM", ["-E", pem, "--key", key]),
            ("encrypted PEM", ["-E", pem, "--key", encryptedKey, "--pass", "keypass"]),
        ]
        for (name, arguments) in cases {
            let run = try await runSesame(["--cacert", root] + arguments + [url])
            #expect(run.status == 0, "\(name): \(run.stderr)")
            #expect(
                run.stdout.contains("CN=cli-client") && run.stdout.contains("verify=SUCCESS"),
                "\(name): \(run.stdout)"
            )
        }
        // nginx finishes the handshake and answers 400 itself for an untrusted or missing certificate.
        let rogue = try Self.pki.clientCertificate(commonName: "rogue", issuer: Self.pki.untrustedRoot)
        let rogueFile = try write(try rogue.pkcs12(password: "x"), "rogue.p12")
        let untrusted = try await runSesame(["--cacert", root, "-f", "-E", "\(rogueFile):x", url])
        #expect(untrusted.status == 8, "\(untrusted.stderr)")
        let none = try await runSesame(["--cacert", root, "-f", url])
        #expect(none.status == 8)
        let wrongPassword = try await runSesame(["--cacert", root, "-E", "\(modern):nope", url])
        #expect(wrongPassword.status == 5)
        #expect(wrongPassword.stderr.contains("client certificate"), "\(wrongPassword.stderr)")
        let pemAsP12 = try await runSesame(["--cacert", root, "-E", legacy, "--pass", "p12pass", url])
        #expect(pemAsP12.status == 5)
        #expect(pemAsP12.stderr.contains("--cert-type P12"), "\(pemAsP12.stderr)")
    }

    @Test(arguments: [OpenSSLServer.Version.tls12, .tls13])
    func handshakeLevelRefusalsAreExitCode5(version: OpenSSLServer.Version) async throws {
        let server = try await OpenSSLServer(pki: Self.pki, version: version, requireClientCertificate: true)
        defer { server.stop() }
        let root = try write(Data(Self.pki.root.certificatePEM.utf8), "root-\(version).pem")
        let url = "https://localhost:\(server.port)/"
        let missing = try await runSesame(["--cacert", root, url])
        #expect(missing.status == 5, "\(missing.stderr)")
        #expect(missing.stderr.contains("client certificate required"), "\(missing.stderr)")
        let rogue = try Self.pki.clientCertificate(commonName: "rogue", issuer: Self.pki.untrustedRoot)
        let rogueFile = try write(try rogue.pkcs12(password: "x"), "rogue-\(version).p12")
        let rejected = try await runSesame(["--cacert", root, "-E", "\(rogueFile):x", url])
        #expect(rejected.status == 5, "\(rejected.stderr)")
        #expect(rejected.stderr.contains("client certificate rejected"), "\(rejected.stderr)")
        let good = try write(try Self.pki.clientCertificate().pkcs12(password: "x"), "good-\(version).p12")
        let accepted = try await runSesame(["--cacert", root, "-E", "\(good):x", url])
        #expect(accepted.status == 0, "\(accepted.stderr)")
    }
}
