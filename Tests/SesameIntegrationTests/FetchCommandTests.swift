import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// The `sesame` executable, run as a user would, against `LocalServer` on loopback.
@Suite struct FetchCommandTests {
    static let pki: TestPKI = {
        try! TestPKI()  // safe: nothing can be tested without it
    }()

    func sesame(_ arguments: [String]) async throws -> CLIRun { try await runSesame(arguments) }

    func server(
        tls: Bool = false,
        _ handler: @escaping @Sendable (LocalServer.Request) -> LocalServer.Response
    ) throws
        -> LocalServer
    {
        var configuration = LocalServer.Configuration(identity: tls ? try Self.pki.leaf() : nil)
        configuration.handler = handler
        return try LocalServer(configuration)
    }

    func writeRoot() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("root-\(UUID().uuidString).pem").path
        try Data(Self.pki.root.certificatePEM.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func getPrintsTheBody() async throws {
        let origin = try server { request in .text("hello \(request.target)") }
        defer { origin.shutdown() }
        let run = try await sesame([origin.baseURL + "/x?y=1"])
        #expect(run.status == 0)
        #expect(run.stdout == "hello /x?y=1")
    }

    @Test func includeVerboseAndHeaders() async throws {
        let root = try writeRoot()
        let origin = try server(tls: true) { request in .text("ua=\(request.headers["x-test"] ?? "")") }
        defer { origin.shutdown() }
        let run = try await sesame(["fetch", "-i", "-v", "-H", "X-Test: yes", "--cacert", root, origin.baseURL + "/"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout.hasPrefix("HTTP/1.1 200 OK\r\n"))
        #expect(run.stdout.hasSuffix("\r\n\r\nua=yes"))
        #expect(run.stderr.contains("* Connected to https://localhost:\(origin.port)"))
        #expect(run.stderr.contains("* TLS: TLSv1.3"))
        #expect(run.stderr.contains("* Server certificate: CN=localhost,O=Sesame Test"))
        #expect(run.stderr.contains("* Server trust: trusted"))
        #expect(run.stderr.contains("> GET / HTTP/1.1"))
        #expect(run.stderr.contains("> X-Test: yes"))
        #expect(run.stderr.contains("< HTTP/1.1 200 OK"))
    }

    @Test func dataPostsAFormAndDataBinarySendsAFile() async throws {
        let origin = try server { request in
            .text(
                "\(request.method) \(request.headers["content-type"] ?? "-") \(String(decoding: request.body, as: UTF8.self))"
            )
        }
        defer { origin.shutdown() }
        let form = try await sesame([origin.baseURL + "/", "-d", "a=1", "-d", "b=2"])
        #expect(form.stdout == "POST application/x-www-form-urlencoded a=1&b=2")
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("body-\(UUID().uuidString)").path
        try Data("line1\nline2\n".utf8).write(to: URL(fileURLWithPath: file))
        let binary = try await sesame([
            "-X", "PUT", "--data-binary", "@" + file, "-H", "Content-Type: text/plain", origin.baseURL + "/",
        ])
        #expect(binary.stdout == "PUT text/plain line1\nline2\n")
        let missing = try await sesame(["--data-binary", "@/nonexistent/file", origin.baseURL + "/"])
        #expect(missing.status == 2)
    }

    @Test func outputFileAndFollowingRedirects() async throws {
        let origin = try server { request in
            request.target == "/start" ? .redirect(302, to: "/file") : .bytes([UInt8](repeating: 65, count: 100_000))
        }
        defer { origin.shutdown() }
        let destination = FileManager.default.temporaryDirectory.appendingPathComponent("download-\(UUID().uuidString)")
            .path
        let notFollowed = try await sesame([origin.baseURL + "/start", "-o", destination])
        #expect(notFollowed.status == 0)
        #expect(readText(destination).isEmpty)
        let followed = try await sesame(["-L", origin.baseURL + "/start", "-o", destination])
        #expect(followed.status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: destination)).count == 100_000)
    }

    @Test(arguments: [
        ("untrusted", Int32(4)), ("refused", 3), ("garbage", 9), ("fail", 8), ("usage", 2), ("timeout", 3),
    ])
    func exitCodesDistinguishFailures(kind: String, expected: Int32) async throws {
        let root = try writeRoot()
        switch kind {
        case "untrusted":
            let origin = try LocalServer(.init(identity: try Self.pki.untrustedLeaf()))
            defer { origin.shutdown() }
            let run = try await sesame(["--cacert", root, origin.baseURL + "/"])
            #expect(run.status == expected, "\(run.stderr)")
            #expect(run.stderr.contains("untrusted root"))
        case "refused":
            #expect(try await sesame(["http://127.0.0.1:\(LoopbackPort.unused())/"]).status == expected)
        case "garbage":
            let origin = try server { _ in .raw("nonsense\r\n\r\n", thenClose: true) }
            defer { origin.shutdown() }
            #expect(try await sesame([origin.baseURL + "/"]).status == expected)
        case "fail":
            let origin = try server { _ in .text("missing", status: 404) }
            defer { origin.shutdown() }
            let run = try await sesame(["-f", origin.baseURL + "/"])
            #expect(run.status == expected)
            #expect(run.stdout.isEmpty)
            #expect(try await sesame([origin.baseURL + "/"]).status == 0)
        case "usage":
            #expect(try await sesame(["--max-redirs", "many", "http://localhost/"]).status == expected)
        default:
            let origin = try server { _ in .stall }
            defer { origin.shutdown() }
            let run = try await sesame(["-m", "0.3", origin.baseURL + "/"])
            #expect(run.status == expected)
        }
    }

    @Test func insecureWarnsAndConnects() async throws {
        let origin = try LocalServer(.init(identity: try Self.pki.selfSignedLeaf()))
        defer { origin.shutdown() }
        let run = try await sesame(["-k", origin.baseURL + "/"])
        #expect(run.status == 0)
        #expect(run.stderr.contains("warning: --insecure"))
    }

    @Test func aBodyThatExpectsContinueGoesOnceTheWaitIsOver() async throws {
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.sendsContinue = false  // as a server that ignores the expectation
        configuration.handler = { request in .text("got \(request.body.count)") }
        let origin = try LocalServer(configuration)
        defer { origin.shutdown() }
        let run = try await sesame([
            "-d", String(repeating: "x", count: 5000), "-H", "Expect: 100-continue", "--expect100-timeout", "0.2",
            origin.baseURL + "/",
        ])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "got 5000")
        let bad = try await sesame(["--expect100-timeout", "soon", origin.baseURL + "/"])
        #expect(bad.status == 2, "\(bad.stderr)")
    }

    @Test func helpDocumentsEveryOptionAndExitCode() async throws {
        let help = try await sesame(["--help"]).stdout
        for option in [
            "--request", "--header", "--data", "--data-binary", "--output", "--include", "--verbose", "--silent",
            "--location", "--max-redirs", "--connect-timeout", "--expect100-timeout", "--max-time", "--cacert",
            "--capath", "--insecure",
            "--fail", "8 HTTP status",
        ] {
            #expect(help.contains(option), "\(option) is not in --help")
        }
    }

    @Test func pinnedCertificatesDecideWithTheirPublicKeys() async throws {
        let root = try writeRoot()
        let origin = try server(tls: true) { _ in .text("pinned ok") }
        defer { origin.shutdown() }
        let good = try await sesame(["--cacert", root, "--pin-cert", root, origin.baseURL + "/"])
        #expect(good.status == 0, "\(good.stderr)")
        #expect(good.stdout == "pinned ok")
        let other = FileManager.default.temporaryDirectory.appendingPathComponent("other-\(UUID().uuidString).pem").path
        try Data(Self.pki.untrustedRoot.certificatePEM.utf8).write(to: URL(fileURLWithPath: other))
        let bad = try await sesame(["--cacert", root, "--pin-cert", other, origin.baseURL + "/"])
        #expect(bad.status == 4, "\(bad.stderr)")
        let usage = try await sesame(["--pinning-mode", "certificate", origin.baseURL + "/"])
        #expect(usage.status == 2)
    }

    @Test func verboseOutputNeverShowsThePasswordFromMinusU() async throws {
        let root = try writeRoot()
        let gate = BasicAuthGate(realm: "r", users: ["ada": "s3cret-pw"])
        let origin = try server(tls: true) { request in
            if request.target == "/start" { return .redirect(302, to: "/landing") }
            return gate.check(request) ?? .text("landed")
        }
        defer { origin.shutdown() }
        let run = try await sesame(["-v", "-L", "-u", "ada:s3cret-pw", "--cacert", root, origin.baseURL + "/start"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "landed")
        #expect(run.stderr.contains("Following the 302 redirect"))
        #expect(!run.stderr.contains("s3cret-pw"), "\(run.stderr)")
    }
}
