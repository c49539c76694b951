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

    @Test func noReadWaitingAllowsNothing() {
        let policy = InlineWaitPolicy()
        #expect(!policy.allowsInlineWait)
        policy.readBegan()
        policy.readEnded()
        #expect(!policy.allowsInlineWait)
    }
}
