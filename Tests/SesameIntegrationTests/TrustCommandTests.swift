import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// `sesame` and `sesame trust` against nginx serving good and bad certificates on loopback.
@Suite(.serialized) struct TrustCommandTests {
    static let pki: TestPKI = {
        try! TestPKI()  // safe: nothing can be tested without it
    }()

    func writeRoot() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("root-\(UUID().uuidString).pem").path
        try Data(Self.pki.root.certificatePEM.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func eachBadCertificateHasItsExitCodeAndReason() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let root = try writeRoot()
        let expectations: [(String, Int32, String?)] = [
            ("expired", 4, "expired"),
            ("wrong-host", 4, "hostname mismatch"),
            ("untrusted-root", 4, "untrusted root"),
            ("self-signed", 4, "self-signed"),
            ("leaf-only", 4, "untrusted root"),
            ("rsa", 0, nil),
        ]
        for (name, status, reason) in expectations {
            let port = try #require(nginx.trustCasePorts[name])
            let url = "https://localhost:\(port)/"
            let fetch = try await runSesame(["--cacert", root, url])
            #expect(fetch.status == status, "\(name): \(fetch.stderr)")
            if let reason { #expect(fetch.stderr.contains(reason), "\(name): \(fetch.stderr)") }
            let explained = try await runSesame(["trust", "--cacert", root, url])
            #expect(explained.status == status, "\(name): \(explained.stdout) \(explained.stderr)")
            #expect(explained.stdout.contains("pin:     sha256/"), "\(name)")
            if let reason { #expect(explained.stdout.contains(reason), "\(name): \(explained.stdout)") }
        }
    }

    @Test func trustPrintsPinsThatPinnedpubkeyAccepts() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let root = try writeRoot()
        let url = "https://localhost:\(nginx.httpsPort)/small.txt"
        let explained = try await runSesame(["trust", "--cacert", root, url])
        #expect(explained.status == 0, "\(explained.stderr)")
        let pins = explained.stdout.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            .filter { $0.hasPrefix("sha256//") }
        #expect(pins.count == 3)  // leaf, intermediate, root
        let pinned = try await runSesame(["--cacert", root, "--pinnedpubkey", pins[1], url])
        #expect(pinned.status == 0, "\(pinned.stderr)")
        #expect(pinned.stdout == "hello nginx\n")
        let wrong = "sha256//" + Data(repeating: 3, count: 32).base64EncodedString()
        let refused = try await runSesame(["--cacert", root, "--pinnedpubkey", wrong, url])
        #expect(refused.status == 4)
        #expect(refused.stderr.contains("pinned public keys"), "\(refused.stderr)")
        let badPin = try await runSesame(["--cacert", root, "--pinnedpubkey", "sha256//nope", url])
        #expect(badPin.status == 2)
        let noDomain = try await runSesame([
            "--cacert", root, "--no-validate-domain", "https://localhost:\(nginx.trustCasePorts["wrong-host"] ?? 0)/",
        ])
        #expect(noDomain.status == 0, "\(noDomain.stderr)")
    }

    @Test func offlineEvaluationWithJSONAndATime() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("eval-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let leaf = try Self.pki.leaf()
        let leafFile = directory.appendingPathComponent("leaf.pem").path
        let intermediateFile = directory.appendingPathComponent("intermediate.pem").path
        try Data(leaf.certificatePEM.utf8).write(to: URL(fileURLWithPath: leafFile))
        try Data(Self.pki.intermediate.certificatePEM.utf8).write(to: URL(fileURLWithPath: intermediateFile))
        let root = try writeRoot()
        let base = ["trust", "evaluate", "--leaf", leafFile, "--intermediates", intermediateFile, "--anchors", root]
        let good = try await runSesame(base + ["--host", "localhost", "--json"])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout.contains("\"trusted\" : true"))
        let wrongHost = try await runSesame(base + ["--host", "example.org"])
        #expect(wrongHost.status == 4)
        #expect(wrongHost.stdout.contains("hostname mismatch"))
        let ip = try await runSesame(base + ["--ip", "127.0.0.1"])
        #expect(ip.status == 0, "\(ip.stdout)")
        let future = try await runSesame(base + ["--host", "localhost", "--at", "2040-01-01T00:00:00Z"])
        #expect(future.status == 4)
        #expect(future.stdout.contains("expired"))
        let usage = try await runSesame(["trust", "evaluate", "--leaf", leafFile])
        #expect(usage.status == 2)
    }
}
