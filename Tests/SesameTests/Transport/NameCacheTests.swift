import Foundation
import SesameTesting
import Synchronization
import Testing

@testable import Sesame

/// Serialized: two of these tests hold one of the process's four lookup threads on a gate each,
/// and a third needs another one free meanwhile.
@Suite(.serialized) struct NameCacheTests {
    /// A lookup that counts its calls and answers with localhost's addresses; calls listed in
    /// `failing` (1-based) fail instead.
    final class CountingLookup: Sendable {
        let calls = Atomic<Int>(0)
        /// The calls' numbers as they start, to wait for.
        let started = Recorder<Int>()
        let failing: Set<Int>
        /// When set, each call waits for it to be signalled before it answers.
        let gate: DispatchSemaphore?

        init(failing: Set<Int> = [], gate: DispatchSemaphore? = nil) {
            self.failing = failing
            self.gate = gate
        }

        var function: @Sendable (String, Int) throws -> [SocketAddress] {
            { [self] _, port in
                let call = calls.add(1, ordering: .relaxed).newValue
                started.append(call)
                gate?.wait()
                if failing.contains(call) { throw SesameError(.nameResolutionFailed, "call \(call) fails") }
                return try Resolver.lookup("localhost", port)
            }
        }

        var count: Int { calls.load(ordering: .relaxed) }
    }

    func resolve(
        _ host: String = "service.test",
        port: Int = 443,
        lifetime: Duration?,
        cache: NameCache,
        lookup: CountingLookup,
        timeout: Duration = .seconds(10)
    ) async throws -> [SocketAddress] {
        try await Resolver.resolve(
            host: host,
            port: port,
            timeout: timeout,
            cacheLifetime: lifetime,
            cache: cache,
            lookingUpWith: lookup.function
        )
    }

    @Test func concurrentLookupsOfOneNameShareOneAndItsAnswerIsKept() async throws {
        let cache = NameCache(capacity: 8)
        let gate = DispatchSemaphore(value: 0)
        let lookup = CountingLookup(gate: gate)
        let answers = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<16 {
                group.addTask {
                    try await resolve(lifetime: .seconds(30), cache: cache, lookup: lookup).map(\.description)
                }
            }
            // The lookup answers only once all sixteen callers wait for it.
            let joined = await eventually(within: .seconds(60)) {
                cache.waiting(host: "service.test", port: 443) == 16
            }
            gate.signal()
            try #require(joined)
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(lookup.count == 1)
        #expect(answers.count == 16)
        #expect(Set(answers).count == 1)
        #expect(answers.first?.isEmpty == false)
        _ = try await resolve(lifetime: .seconds(30), cache: cache, lookup: lookup)
        #expect(lookup.count == 1)
        // The same name on another port is another entry (and its lookup another call).
        gate.signal()
        _ = try await resolve(port: 8443, lifetime: .seconds(30), cache: cache, lookup: lookup)
        #expect(lookup.count == 2)
    }

    @Test func anAnswerOlderThanTheCallerAcceptsIsLookedUpAgain() async throws {
        let clock = LoopClock.manual()
        let cache = NameCache(capacity: 8, clock: clock)
        let lookup = CountingLookup()
        _ = try await resolve(lifetime: .milliseconds(50), cache: cache, lookup: lookup)
        _ = try await resolve(lifetime: .milliseconds(50), cache: cache, lookup: lookup)
        #expect(lookup.count == 1)
        clock.advance(by: .milliseconds(51))
        _ = try await resolve(lifetime: .milliseconds(50), cache: cache, lookup: lookup)
        #expect(lookup.count == 2)
        // A caller that accepts older answers takes the one just kept.
        _ = try await resolve(lifetime: .seconds(60), cache: cache, lookup: lookup)
        #expect(lookup.count == 2)
    }

    @Test func withoutALifetimeEveryCallLooksUp() async throws {
        let cache = NameCache(capacity: 8)
        let lookup = CountingLookup()
        for lifetime in [nil, Duration.zero, nil] {
            _ = try await resolve(lifetime: lifetime, cache: cache, lookup: lookup)
        }
        #expect(lookup.count == 3)
        #expect(cache.count == 0)
    }

    @Test func failuresAreNotKept() async throws {
        let cache = NameCache(capacity: 8)
        let lookup = CountingLookup(failing: [1])
        let error = await #expect(throws: SesameError.self) {
            _ = try await resolve(lifetime: .seconds(30), cache: cache, lookup: lookup)
        }
        #expect(error?.code == .nameResolutionFailed)
        #expect(cache.count == 0)
        _ = try await resolve(lifetime: .seconds(30), cache: cache, lookup: lookup)
        #expect(lookup.count == 2)
        #expect(cache.count == 1)
    }

    @Test func aForgottenAnswerIsLookedUpAgain() async throws {
        let cache = NameCache(capacity: 8)
        let lookup = CountingLookup()
        _ = try await resolve("Service.TEST", lifetime: .seconds(30), cache: cache, lookup: lookup)
        cache.forget(host: "service.test", port: 443)
        _ = try await resolve(lifetime: .seconds(30), cache: cache, lookup: lookup)
        #expect(lookup.count == 2)
    }

    /// A lookup that hangs is joined only while it is younger than the age the caller accepts;
    /// after that a new one starts, and the hung one, when it ends, still answers its own callers.
    @Test func aLookupOlderThanTheLifetimeIsNotJoined() async throws {
        let clock = LoopClock.manual()
        let cache = NameCache(capacity: 8, clock: clock)
        let gate = DispatchSemaphore(value: 0)
        let hung = CountingLookup(gate: gate)
        let first = Task { try await resolve(lifetime: .milliseconds(50), cache: cache, lookup: hung) }
        try #require(await hung.started.reached(1, within: .seconds(60)))
        clock.advance(by: .milliseconds(51))  // the hung lookup is now older than 50 ms
        let quick = CountingLookup()
        _ = try await resolve(lifetime: .milliseconds(50), cache: cache, lookup: quick)
        #expect(quick.count == 1)
        gate.signal()
        #expect(try await first.value.isEmpty == false)
        #expect(hung.count == 1)
    }

    @Test func aCallerStopsWaitingAtItsTimeoutWhileTheSharedLookupGoesOn() async throws {
        let cache = NameCache(capacity: 8)
        let gate = DispatchSemaphore(value: 0)
        let lookup = CountingLookup(gate: gate)
        let patient = Task { try await resolve(lifetime: .seconds(30), cache: cache, lookup: lookup) }
        try #require(await lookup.started.reached(1, within: .seconds(60)))
        let error = await #expect(throws: SesameError.self) {
            _ = try await resolve(lifetime: .seconds(30), cache: cache, lookup: lookup, timeout: .milliseconds(50))
        }
        #expect(error?.code == .connectTimeout)
        gate.signal()
        #expect(try await patient.value.isEmpty == false)
        #expect(lookup.count == 1)
        #expect(cache.count == 1)
    }

    @Test func theOldestAnswerGoesWhenTheCacheIsFull() async throws {
        let cache = NameCache(capacity: 2)
        let lookup = CountingLookup()
        for host in ["a.test", "b.test", "c.test"] {
            _ = try await resolve(host, lifetime: .seconds(30), cache: cache, lookup: lookup)
        }
        #expect(cache.count == 2)
        _ = try await resolve("c.test", lifetime: .seconds(30), cache: cache, lookup: lookup)
        _ = try await resolve("b.test", lifetime: .seconds(30), cache: cache, lookup: lookup)
        #expect(lookup.count == 3)
        _ = try await resolve("a.test", lifetime: .seconds(30), cache: cache, lookup: lookup)
        #expect(lookup.count == 4)
    }

    /// Through a session: the answer for a server that took the connection is kept; a port that
    /// refuses it drops the answer for that name and port.
    @Test func aSessionKeepsTheAnswerOnlyWhileItsAddressesAnswer() async throws {
        let origin = try server { _ in .text("ok") }
        let port = origin.port
        let session = testSession()
        _ = try await session.data(from: url(origin, "/"))
        #expect(NameCache.shared.answer(host: "localhost", port: port, maxAge: .seconds(60)) != nil)
        origin.shutdown()
        session.closeIdleConnections()
        let retry = testSession()
        await #expect(throws: SesameError.self) {
            _ = try await retry.data(from: URL(string: "http://localhost:\(port)/")!)
        }
        #expect(NameCache.shared.answer(host: "localhost", port: port, maxAge: .seconds(60)) == nil)
    }
}
