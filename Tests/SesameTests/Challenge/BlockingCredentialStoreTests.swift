import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// A credential store that blocks (a Secret Service waiting for its daemon, an unlock prompt)
/// holds none of Swift's pool threads and no event loop: its reads run on credential threads.
@Suite struct BlockingCredentialStoreTests {
    /// A store whose reads wait until the test opens its gate (or 30 s pass, which the test then
    /// reports: a read that waited that long held a thread the test needed).
    final class GatedStore: CredentialStore, @unchecked Sendable {
        // @unchecked: every mutable field is behind `condition`.
        private let condition = NSCondition()
        private var open = false
        let entered = ArrivalCounter()
        private(set) var timedOut = 0
        let entry: StoredCredential
        var location: String { "gated (test)" }

        init(_ entry: StoredCredential) { self.entry = entry }

        func entries(for spaces: [ProtectionSpace]?) throws(SesameError) -> [StoredCredential] {
            condition.lock()
            defer { condition.unlock() }
            entered.arrive()
            let deadline = Date().addingTimeInterval(30)
            while !open {
                guard condition.wait(until: deadline) else {
                    timedOut += 1
                    break
                }
            }
            return spaces.map { $0.contains(entry.protectionSpace) ? [entry] : [] } ?? [entry]
        }

        func save(_ entry: StoredCredential) throws(SesameError) {}
        func setDefault(user: String?, for space: ProtectionSpace) throws(SesameError) -> Bool { false }
        func remove(user: String, from space: ProtectionSpace) throws(SesameError) -> Bool { false }

        func openGate() {
            condition.lock()
            open = true
            condition.broadcast()
            condition.unlock()
        }

        var timeouts: Int {
            condition.lock()
            defer { condition.unlock() }
            return timedOut
        }
    }

    @Test func blockedStoreReadsLeaveSwiftsPoolFree() async throws {
        let gate = BasicAuthGate(realm: "API", users: ["ada": "s3cret"])
        var server = LocalServer.Configuration(identity: try sharedPKI.leaf())
        server.handler = { request in gate.check(request) ?? .text("hello") }
        let origin = try LocalServer(server)
        defer { origin.shutdown() }
        let space = ProtectionSpace(
            host: "localhost",
            port: origin.port,
            protocol: "https",
            realm: "API",
            authenticationMethod: .httpBasic
        )
        let store = GatedStore(
            StoredCredential(protectionSpace: space, user: "ada", password: "s3cret", isDefault: true)
        )
        var configuration = SessionConfiguration.default
        configuration.proxy = .none
        configuration.tls.trustRoots = .anchors([sharedPKI.root.certificate])
        configuration.credentialStorage = CredentialStorage(store: store)
        configuration.maximumConnectionsPerHost = 32
        let session = Session(configuration: configuration)
        // More requests than Swift's pool has threads: had each read blocked its task's thread,
        // nothing else could run (this test included) until the reads gave up.
        let requests = ProcessInfo.processInfo.activeProcessorCount + 2
        let statuses = Task {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<requests {
                    group.addTask { try await session.data(from: URL(string: origin.baseURL + "/")!).1.status }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
        }
        // The credential threads are the process's: other tests' slow stores may hold them a while.
        #expect(await store.entered.reached(1, within: .seconds(60)))
        // Work on the pool runs while the reads block.
        let probe = await Task.detached { 6 * 7 }.value
        #expect(probe == 42)
        #expect(store.timeouts == 0)
        store.openGate()
        let results = try await statuses.value
        #expect(results == Array(repeating: 200, count: requests))
        #expect(store.timeouts == 0)
    }
}
