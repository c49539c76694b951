import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// `sesame demo`, as README's main job runs it.
@Suite(.serialized) struct DemoTests {
    @Test func everyStepBehavesAndAPermanentCredentialOutlivesTheRun() async throws {
        let data = FileManager.default.temporaryDirectory.appendingPathComponent("demo-data-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: data) }
        let environment = ["XDG_DATA_HOME": data.path]
        let list = try await runSesame(["demo", "--list"], environment: environment)
        #expect(list.status == 0)
        let names = list.stdout.split(separator: "\n").map { String($0.prefix { $0 != ":" }) }
        #expect(
            Set(names).isSuperset(of: [
                "basic", "digest", "wrong-password", "bearer", "server-trust", "pinning", "client-certificate",
                "proxy", "permanent",
            ])
        )
        let start = ContinuousClock.now
        let run = try await runSesame(["demo"], environment: environment)
        #expect(run.status == 0, "\(run.stdout)\n\(run.stderr)")
        #expect(run.stdout.contains("all \(names.count) step(s) behaved"), "\(run.stdout)")
        #expect(ContinuousClock.now - start < .seconds(60), "the tour takes seconds")
        let again = try await runSesame(["demo", "--step", "permanent"], environment: environment)
        #expect(again.status == 0, "\(again.stdout)")
        if !run.stdout.contains("is busy") {
            #expect(again.stdout.contains("from a previous run"), "\(again.stdout)")
        }
        let unknown = try await runSesame(["demo", "--step", "nope"], environment: environment)
        #expect(unknown.status == 2)
    }
}
