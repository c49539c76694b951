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
            ("ocsp-good", 0, nil),
            ("ocsp-revoked", 4, "revoked"),
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

    @Test func stapledOCSPResponsesFromNginx() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let root = try writeRoot()
        let good = "https://localhost:\(nginx.trustCasePorts["ocsp-good"] ?? 0)/"
        let revoked = "https://localhost:\(nginx.trustCasePorts["ocsp-revoked"] ?? 0)/"
        let verbose = try await runSesame(["-v", "--cacert", root, "--cert-status", good])
        #expect(verbose.status == 0, "\(verbose.stderr)")
        #expect(verbose.stderr.contains("* OCSP staple: good"), "\(verbose.stderr)")
        let explained = try await runSesame(["trust", "--cacert", root, good])
        #expect(explained.stdout.contains("OCSP: good"), "\(explained.stdout)")
        // --cert-status needs a staple; the main port sends none.
        let unstapled = try await runSesame([
            "--cacert", root, "--cert-status", "https://localhost:\(nginx.httpsPort)/small.txt",
        ])
        #expect(unstapled.status == 4)
        #expect(unstapled.stderr.contains("stapled no OCSP response"), "\(unstapled.stderr)")
        // -k ignores the staple as it ignores the chain; a pin on top of a revoked staple does not help.
        let insecure = try await runSesame(["-k", revoked])
        #expect(insecure.status == 0, "\(insecure.stderr)")
        #expect(insecure.stdout == "ocsp-revoked")
        let pinned = try await runSesame(["--cacert", root, "--pinnedpubkey", pinOfRoot(), revoked])
        #expect(pinned.status == 4)
        #expect(pinned.stderr.contains("keyCompromise"), "\(pinned.stderr)")
    }

    func pinOfRoot() -> String { "sha256//" + Self.pki.root.certificate.publicKey.sha256Pin }

    @Test func anchorsJoinOrReplaceTheSystemRoots() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let root = try writeRoot()
        let url = "https://localhost:\(nginx.httpsPort)/small.txt"
        let added = try await runSesame(["-v", "--anchors", root, url])
        #expect(added.status == 0, "\(added.stderr)")
        let only = try await runSesame(["--anchors", root, "--anchors-only", url])
        #expect(only.status == 0, "\(only.stderr)")
        // With the system roots only, the private CA is unknown.
        let system = try await runSesame([url])
        #expect(system.status == 4)
        let usage = try await runSesame(["--anchors-only", url])
        #expect(usage.status == 2)
        #expect(usage.stderr.contains("--anchors-only needs"), "\(usage.stderr)")
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
        // RFC 3339 with a fraction and an offset; --max-depth counts intermediates; -v lists paths.
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        formatter.timeZone = TimeZone(secondsFromGMT: 2 * 3600)
        let tomorrow = formatter.string(from: Date() + 86_400)
        #expect(tomorrow.hasSuffix("+02:00"))
        let fraction = try await runSesame(base + ["--host", "localhost", "--at", tomorrow])
        #expect(fraction.status == 0, "\(tomorrow): \(fraction.stdout) \(fraction.stderr)")
        let badTime = try await runSesame(base + ["--host", "localhost", "--at", "2030-06-01T12:00:00"])
        #expect(badTime.status == 2)
        #expect(badTime.stderr.contains("no time zone"), "\(badTime.stderr)")
        let shallow = try await runSesame(base + ["--host", "localhost", "--max-depth", "0", "-v"])
        #expect(shallow.status == 4, "\(shallow.stdout)")
        #expect(shallow.stdout.contains("candidate paths"), "\(shallow.stdout)")
        let deep = try await runSesame(base + ["--host", "localhost", "--max-depth", "1"])
        #expect(deep.status == 0, "\(deep.stdout)")
        let badDepth = try await runSesame(base + ["--host", "localhost", "--max-depth", "-1"])
        #expect(badDepth.status == 2)
        let revokedFile = directory.appendingPathComponent("revoked.der")
        try Self.pki.ocspResponse(for: leaf, answer: .revoked(at: Self.pki.now - 60)).write(to: revokedFile)
        let revoked = try await runSesame(base + ["--host", "localhost", "--ocsp", revokedFile.path])
        #expect(revoked.status == 4)
        #expect(revoked.stdout.contains("revoked"), "\(revoked.stdout)")
        let goodFile = directory.appendingPathComponent("good.der")
        try Self.pki.ocspResponse(for: leaf).write(to: goodFile)
        let stapledGood = try await runSesame(base + ["--host", "localhost", "--ocsp", goodFile.path])
        #expect(stapledGood.status == 0, "\(stapledGood.stdout)")
        #expect(stapledGood.stdout.contains("OCSP: good"), "\(stapledGood.stdout)")
    }

    /// RFC 5280 §6.1.1's policy inputs and a file of several CRLs, as `openssl verify` takes them.
    @Test func policyInputsAndAFileOfCRLs() async throws {
        let directory = try ScratchFolder.make("trust-policies")
        let leaf = try Self.pki.leaf()
        let leafFile = directory.appendingPathComponent("leaf.pem").path
        let intermediateFile = directory.appendingPathComponent("intermediate.pem").path
        try Data(leaf.certificatePEM.utf8).write(to: URL(fileURLWithPath: leafFile))
        try Data(Self.pki.intermediate.certificatePEM.utf8).write(to: URL(fileURLWithPath: intermediateFile))
        let root = try writeRoot()
        let base = [
            "trust", "evaluate", "--leaf", leafFile, "--intermediates", intermediateFile, "--anchors", root, "--host",
            "localhost",
        ]
        let anyPolicy = try await runSesame(base + ["-v"])
        #expect(anyPolicy.status == 0, "\(anyPolicy.stdout)")
        #expect(anyPolicy.stdout.contains("valid policies: none"), "\(anyPolicy.stdout)")
        let pinned = try await runSesame(base + ["--policy", "2.23.140.1.2.1", "--explicit-policy"])
        #expect(pinned.status == 4, "\(pinned.stdout)")
        #expect(pinned.stdout.contains("certificate policy not satisfied"), "\(pinned.stdout)")
        let notAnOID = try await runSesame(base + ["--policy", "ev"])
        #expect(notAnOID.status == 2)
        #expect(notAnOID.stderr.contains("dotted object identifier"), "\(notAnOID.stderr)")

        func pem(_ der: Data) -> String {
            "-----BEGIN X509 CRL-----\n"
                + der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
                + "\n-----END X509 CRL-----\n"
        }
        let crlFile = directory.appendingPathComponent("hierarchy.crl").path
        let both = pem(try Self.pki.crl(issuer: Self.pki.root)) + pem(try Self.pki.crl(issuer: Self.pki.intermediate))
        try Data(both.utf8).write(to: URL(fileURLWithPath: crlFile))
        let checked = try await runSesame(base + ["--crl", crlFile])
        #expect(checked.status == 0, "\(checked.stdout) \(checked.stderr)")
        let mixedFile = directory.appendingPathComponent("mixed.crl").path
        try Data((both + leaf.certificatePEM).utf8).write(to: URL(fileURLWithPath: mixedFile))
        let mixed = try await runSesame(base + ["--crl", mixedFile])
        #expect(mixed.status != 0)
        #expect(mixed.stderr.contains("PEM block 3 is a CERTIFICATE"), "\(mixed.stderr)")
    }
}
