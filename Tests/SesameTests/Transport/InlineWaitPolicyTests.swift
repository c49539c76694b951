import SesameTesting
import Testing

@testable import Sesame

/// ``InlineWaitPolicy`` without sockets: when a read may be waited for on its caller's thread.
@Suite struct InlineWaitPolicyTests {
    @Test func aLoneReadOnANewLoopMayBeWaitedFor() {
        let policy = InlineWaitPolicy()
        policy.readBegan()
        #expect(policy.allowsInlineWait)
        policy.readEnded()
    }

    @Test func aReadBesideAnotherIsNotAndTheLoopNeedsReadsAloneAgain() {
        let policy = InlineWaitPolicy()
        policy.readBegan()
        policy.readBegan()  // overlaps the first
        #expect(!policy.allowsInlineWait)
        policy.readEnded()
        policy.readEnded()
        for round in 1..<InlineWaitPolicy.aloneReadsRequired {
            policy.readBegan()
            #expect(!policy.allowsInlineWait, "round \(round): not yet enough reads alone")
            policy.readEnded()
        }
        policy.readBegan()
        #expect(policy.allowsInlineWait)
        // Another read now joins the one waiting: neither may be waited for on a caller's thread.
        policy.readBegan()
        #expect(!policy.allowsInlineWait)
        policy.readEnded()
        #expect(!policy.allowsInlineWait, "one waits again, but the run of reads alone was broken")
        policy.readEnded()
    }

    @Test func aReadAloneIsNotWaitedForWhileAnotherConnectionIsInUse() {
        // One concurrency thread: the other tasks wait for it before they can start a read, so
        // every read begins alone; the connections they hold say they are there.
        let policy = InlineWaitPolicy()
        policy.connectionsInUse.add(2)
        policy.readBegan()
        #expect(!policy.allowsInlineWait)
        policy.connectionsInUse.subtract(1)
        #expect(policy.allowsInlineWait, "the read's own connection alone")
        policy.readEnded()
    }

    @Test func aConnectionCountsAsInUseOncePerLease() async throws {
        let server = try LocalServer(.plainHTTP)
        defer { server.shutdown() }
        let loop = try EventLoop(name: "in-use")
        defer { loop.shutdown() }
        let connection = try await Connection.connect(host: "127.0.0.1", port: server.port, tls: nil, on: loop)
        let policy = connection.inlineWaits
        connection.useBegan()
        connection.useBegan()  // a second lease of the same connection cannot happen; it counts nothing
        #expect(policy.connectionsInUse.value == 1)
        connection.useEnded()
        connection.useEnded()
        #expect(policy.connectionsInUse.value == 0)
        connection.useBegan()
        await connection.close()  // closing ends the use, whether or not a lease comes back
        #expect(policy.connectionsInUse.value == 0)
    }

    @Test func everyEighthWaitOnACallersThreadEndsWithAYield() {
        let policy = InlineWaitPolicy()
        let yields = (1...3 * InlineWaitPolicy.waitsBetweenYields).map { _ in policy.waitBegan() }
        let expected = (1...3 * InlineWaitPolicy.waitsBetweenYields).map {
            $0.isMultiple(of: InlineWaitPolicy.waitsBetweenYields)
        }
        #expect(yields == expected)
    }

    @Test func noReadWaitingAllowsNothing() {
        let policy = InlineWaitPolicy()
        #expect(!policy.allowsInlineWait)
        policy.readBegan()
        policy.readEnded()
        #expect(!policy.allowsInlineWait)
    }
}
