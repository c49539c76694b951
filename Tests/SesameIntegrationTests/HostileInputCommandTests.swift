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

    /// Answers /ok with 100 bytes, and /broken with a head promising 100 and 10 before closing.
    func downloadServer() throws -> LocalServer {
        try server { request in
            request.target == "/ok"
                ? .bytes([UInt8](repeating: 0x41, count: 100))
                : .raw("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\n0123456789", thenClose: true)
        }
    }

    @Test func outputIsWrittenThroughALinkAndIntoADevice() async throws {
        let origin = try downloadServer()
        defer { origin.shutdown() }
        let folder = try ScratchFolder.make("hostile")
        let target = folder.appendingPathComponent("target").path
        let link = folder.appendingPathComponent("link").path
        #expect(symlink(target, link) == 0)
        let run = try await sesame(["-o", link, origin.baseURL + "/ok"])
        #expect(run.status == 0, "\(run.stderr)")
        var status = stat()
        #expect(lstat(link, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK, "the link is still a link")
        #expect(readText(target) == String(repeating: "A", count: 100))
        let null = try await sesame(["-o", "/dev/null", origin.baseURL + "/ok"])
        #expect(null.status == 0, "\(null.stderr)")
        #expect(stat("/dev/null", &status) == 0 && status.st_mode & S_IFMT == S_IFCHR, "/dev/null is still a device")
    }

    @Test func aFailedTransferLeavesAnAtomicTargetAsItWas() async throws {
        let origin = try downloadServer()
        defer { origin.shutdown() }
        let file = try scratchFile("kept.txt", "old contents")
        let atomic = try await sesame(["--atomic", "-o", file, origin.baseURL + "/broken"])
        #expect(atomic.status != 0)
        #expect(readText(file) == "old contents")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: (file as NSString).deletingLastPathComponent) == [
                "kept.txt"
            ]
        )
        let replaced = try await sesame(["--atomic", "-o", file, origin.baseURL + "/ok"])
        #expect(replaced.status == 0, "\(replaced.stderr)")
        #expect(readText(file) == String(repeating: "A", count: 100))
        // Without --atomic, as curl: what arrived is kept; --remove-on-error removes it.
        let partial = try await sesame(["-o", file, origin.baseURL + "/broken"])
        #expect(partial.status != 0)
        #expect(readText(file) == "0123456789")
        let removed = try await sesame(["--remove-on-error", "-o", file, origin.baseURL + "/broken"])
        #expect(removed.status != 0)
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test func aTransferThatNeverStartsLeavesTheFileUntouched() async throws {
        let file = try scratchFile("untouched.txt", "old contents")
        let port = LoopbackPort.unused()
        let run = try await sesame(["-o", file, "http://127.0.0.1:\(port)/"])
        #expect(run.status == 3, "\(run.stderr)")
        #expect(readText(file) == "old contents")
    }

    /// Runs the CLI and tells how long it took.
    func timed(_ arguments: [String]) async throws -> (CLIRun, Duration) {
        let started = ContinuousClock.now
        let run = try await sesame(arguments)
        return (run, started.duration(to: .now))
    }

    @Test(arguments: [["--connect-timeout", "1"], ["-m", "1"]])
    func aConnectThatNeverCompletesEndsAtTheDeadline(limit: [String]) async throws {
        let stalled = try StalledListener(.neverAccepts)
        defer { stalled.close() }
        let (run, took) = try await timed(limit + ["http://127.0.0.1:\(stalled.port)/"])
        #expect(run.status == 3, "\(run.stderr)")
        // The bound tells a 1 s limit from the defaults (60 s connect, 30 s handshake) with room for a
        // loaded machine: under a sanitizer on two processors the CLI alone took 22 s to start and end.
        #expect(took < .seconds(28), "ended after \(took); the limit is 1 s, the old fixed one 60 s")
        #expect(run.stderr.contains("timed out"), "\(run.stderr)")
    }

    @Test(arguments: [["--connect-timeout", "1"], ["-m", "1"]])
    func aStalledTLSHandshakeEndsAtTheDeadline(limit: [String]) async throws {
        let stalled = try StalledListener(.acceptsAndSaysNothing)
        defer { stalled.close() }
        let (run, took) = try await timed(limit + ["https://127.0.0.1:\(stalled.port)/"])
        #expect(run.status == 3, "\(run.stderr)")
        #expect(took < .seconds(28), "ended after \(took); the limit is 1 s, the handshake's own 30 s")
        #expect(run.stderr.contains(limit[0] == "-m" ? "resource timeout" : "TLS handshake"), "\(run.stderr)")
    }
}
