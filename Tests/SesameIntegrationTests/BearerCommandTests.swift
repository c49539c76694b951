import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// `sesame --oauth2-bearer` and `--oauth2-refresh` against ``BearerTokenGate`` on loopback.
@Suite struct BearerCommandTests {
    func server(_ gate: BearerTokenGate) throws -> LocalServer {
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { request in gate.check(request) ?? .text("report") }
        return try LocalServer(configuration)
    }

    @Test func aRefusedTokenIsReplacedByTheRefreshCommandsOnce() async throws {
        let gate = BearerTokenGate(realm: "api")
        let expired = gate.issue()
        let valid = gate.issue()  // the expired one is no longer valid
        let origin = try server(gate)
        defer { origin.shutdown() }
        let run = try await runSesame([
            "-v", "--oauth2-bearer", expired,
            "--oauth2-refresh", "test \"$SESAME_REJECTED_TOKEN\" = '\(expired)' && echo \(valid)",
            "http://127.0.0.1:\(origin.port)/",
        ])
        #expect(run.status == 0)
        #expect(run.stdout == "report")
        #expect(run.stderr.contains("* bearer token for http://127.0.0.1:\(origin.port) refreshed"))
        #expect(gate.refusedCount == 1)
        #expect(gate.acceptedCount == 1)
    }

    @Test func withoutARefreshCommandThe401IsTheAnswer() async throws {
        let gate = BearerTokenGate(realm: "api")
        gate.issue()
        let origin = try server(gate)
        defer { origin.shutdown() }
        let run = try await runSesame(["-i", "--oauth2-bearer", "stale", "http://127.0.0.1:\(origin.port)/"])
        #expect(run.status == 0)
        #expect(run.stdout.hasPrefix("HTTP/1.1 401"))
        #expect(gate.refusedCount == 1)
    }

    @Test func aRefreshCommandThatLeavesAProcessHoldingItsOutputDoesNotHoldTheFetch() async throws {
        let gate = BearerTokenGate(realm: "api")
        let valid = gate.issue()
        let origin = try server(gate)
        defer { origin.shutdown() }
        // The process left behind holds the pipe for 45 s; a fetch that waited for it would be
        // killed at 30 s (status 137).
        let run = try await runSesame(
            [
                "--oauth2-bearer", "stale", "--oauth2-refresh", "(sleep 45 &); echo \(valid)",
                "http://127.0.0.1:\(origin.port)/",
            ],
            killAfter: .seconds(30)
        )
        #expect(run.status == 0)
        #expect(run.stdout == "report")
    }

    @Test func aFailingRefreshCommandFailsTheFetch() async throws {
        let gate = BearerTokenGate(realm: "api")
        gate.issue()
        let origin = try server(gate)
        defer { origin.shutdown() }
        let run = try await runSesame([
            "--oauth2-bearer", "stale", "--oauth2-refresh", "exit 3", "http://127.0.0.1:\(origin.port)/",
        ])
        #expect(run.status != 0)
        #expect(run.stderr.contains("exited with status 3"))
        #expect(gate.refusedCount == 1)
    }
}
