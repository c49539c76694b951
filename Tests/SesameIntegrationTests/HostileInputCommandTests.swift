import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// The `sesame` executable against servers that try to make it leak, loop, grow or break what the
/// user keeps: each case is one the release CLI once got wrong.
@Suite struct HostileInputCommandTests {
    func sesame(_ arguments: [String], environment: [String: String] = [:]) async throws -> CLIRun {
        try await runSesame(arguments, environment: environment)
    }

    func server(_ handler: @escaping @Sendable (LocalServer.Request) -> LocalServer.Response) throws -> LocalServer {
        var configuration = LocalServer.Configuration(identity: nil)
        configuration.handler = handler
        return try LocalServer(configuration)
    }

    func scratchFile(_ name: String, _ contents: String) throws -> String {
        let path = try ScratchFolder.make("hostile").appendingPathComponent(name).path
        try Data(contents.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func consentToCleartextGoesWithTheOriginItWasGivenFor() async throws {
        let second = try server { request in
            BasicAuthGate(realm: "second", users: ["eve": "netrc-secret"]).check(request) ?? .text("second")
        }
        defer { second.shutdown() }
        let first = try server { request in
            BasicAuthGate(realm: "first", users: ["ada": "x"]).check(request)
                ?? .redirect(302, to: "http://localhost:\(second.port)/landing")
        }
        defer { first.shutdown() }
        let netrc = try scratchFile("netrc", "machine localhost login eve password netrc-secret\n")
        let run = try await sesame([
            "-L", "-u", "ada:x", "--netrc-file", netrc, "http://127.0.0.1:\(first.port)/basic-then-redirect",
        ])
        #expect(first.requests.contains { $0.headers["authorization"] != nil }, "\(run.stderr)")
        #expect(!second.requests.isEmpty)
        #expect(
            second.requests.allSatisfy { $0.headers["authorization"] == nil },
            "netrc's password went out over http"
        )
        #expect(run.status == 0, "\(run.stderr)")  // as curl: the 401 is the answer
    }

    @Test func aCustomHostHeaderStaysWithItsOwnServer() async throws {
        let second = try server { request in .text("host=\(request.headers["host"] ?? "")") }
        defer { second.shutdown() }
        let first = try server { _ in .redirect(302, to: "http://127.0.0.1:\(second.port)/landing") }
        defer { first.shutdown() }
        let run = try await sesame(["-L", "-H", "Host: chosen.example", first.baseURL + "/"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(first.requests.first?.headers["host"] == "chosen.example")
        #expect(run.stdout == "host=127.0.0.1:\(second.port)")
    }

    @Test func aServerCannotBreakTheCookieJar() async throws {
        let origin = try server { request in
            request.target == "/set"
                ? .text("set", headers: [("Set-Cookie", "evil=a\tb\tc"), ("Set-Cookie", "good=1")])
                : .text("cookie=[\(request.headers["cookie"] ?? "")]")
        }
        defer { origin.shutdown() }
        let jar = try ScratchFolder.make("hostile").appendingPathComponent("jar.txt").path
        let set = try await sesame(["-c", jar, origin.baseURL + "/set"])
        #expect(set.status == 0, "\(set.stderr)")
        let read = try await sesame(["-b", jar, origin.baseURL + "/read"])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout == "cookie=[good=1]")
    }

    @Test func aBadJarLineIsSkippedWithAWarningAndABadFileIsNotAServerTrustFailure() async throws {
        let origin = try server { request in .text("cookie=[\(request.headers["cookie"] ?? "")]") }
        defer { origin.shutdown() }
        let jar = try scratchFile(
            "jar.txt",
            "# Netscape HTTP Cookie File\nnot a cookie line\nlocalhost\tFALSE\t/\tFALSE\t0\tkept\tyes\n"
        )
        let run = try await sesame(["-b", jar, origin.baseURL + "/"])
        #expect(run.status == 0, "\(run.stderr)")
        #expect(run.stdout == "cookie=[kept=yes]")
        #expect(run.stderr.contains("\(jar):2: expected 7 tab-separated fields"), "\(run.stderr)")
        // A certificate file that cannot be read is the user's input failing: exit 1, not 4.
        let missing = try await sesame(["--cacert", jar + ".missing", origin.baseURL + "/"])
        #expect(missing.status == 1, "\(missing.stderr)")
    }
}
