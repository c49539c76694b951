import Foundation
import Testing

@testable import Sesame

@Suite struct PoolStateMachineTests {
    final class FakeConnection {}
    let origin = Origin(URL(string: "https://example.test/")!)!
    let other = Origin(URL(string: "https://example.test:8443/")!)!
    let start = ContinuousClock.now

    @Test func connectionsOpenUpToTheLimitThenRequestsWaitInOrder() {
        var machine = PoolStateMachine<FakeConnection, FakeConnection>(limit: 2, idleTimeout: .seconds(60))
        guard case .connect = machine.acquire(origin, waiter: 1, now: start).action,
            case .connect = machine.acquire(origin, waiter: 2, now: start).action,
            case .wait = machine.acquire(origin, waiter: 3, now: start).action,
            case .wait = machine.acquire(origin, waiter: 4, now: start).action
        else {
            Issue.record("expected two connects, then two waits")
            return
        }
        // Another origin has its own limit.
        guard case .connect = machine.acquire(other, waiter: 5, now: start).action else {
            Issue.record("the limit is per origin")
            return
        }
        machine.opened(origin)
        machine.opened(origin)
        #expect(machine.counts(origin) == (idle: 0, leased: 2, opening: 0, waiting: 2))

        let first = FakeConnection()
        guard case .reuse(let waiter, let handed)? = machine.release(origin, first, reusable: true, now: start) else {
            Issue.record("a reusable connection goes to the first waiter")
            return
        }
        #expect(waiter == 3)
        #expect(handed === first)
        guard case .connect(let next)? = machine.release(origin, FakeConnection(), reusable: false, now: start) else {
            Issue.record("a closed connection's slot goes to the next waiter")
            return
        }
        #expect(next == 4)
        #expect(machine.counts(origin) == (idle: 0, leased: 1, opening: 1, waiting: 0))
    }

    @Test func idleConnectionsAreReusedNewestFirstAndExpire() {
        var machine = PoolStateMachine<FakeConnection, FakeConnection>(limit: 4, idleTimeout: .seconds(10))
        _ = machine.acquire(origin, waiter: 1, now: start)
        _ = machine.acquire(origin, waiter: 2, now: start)
        machine.opened(origin)
        machine.opened(origin)
        let older = FakeConnection()
        let newer = FakeConnection()
        let firstHandOff = machine.release(origin, older, reusable: true, now: start)
        let secondHandOff = machine.release(origin, newer, reusable: true, now: start + .seconds(5))
        #expect(firstHandOff == nil && secondHandOff == nil)

        guard case .reuse(let reused) = machine.acquire(origin, waiter: 3, now: start + .seconds(6)).action else {
            Issue.record("an idle connection is reused")
            return
        }
        #expect(reused === newer)
        // At 12 s the older one (idle since 0 s) has expired and is handed back for closing.
        let (action, expired) = machine.acquire(origin, waiter: 4, now: start + .seconds(12))
        #expect(expired.count == 1 && expired.first === older)
        guard case .connect = action else {
            Issue.record("with nothing idle left, a new connection is opened")
            return
        }
    }

    @Test func aPreferredIdleConnectionIsTakenOverTheNewest() {
        var machine = PoolStateMachine<FakeConnection, FakeConnection>(limit: 4, idleTimeout: .seconds(10))
        _ = machine.acquire(origin, waiter: 1, now: start)
        _ = machine.acquire(origin, waiter: 2, now: start)
        machine.opened(origin)
        machine.opened(origin)
        let challenged = FakeConnection()
        let newer = FakeConnection()
        _ = machine.release(origin, challenged, reusable: true, now: start)
        _ = machine.release(origin, newer, reusable: true, now: start + .seconds(1))
        // The AUTHENTICATE goes on the connection the CHALLENGE came on, not the newest idle one.
        let preferred = machine.acquire(origin, waiter: 3, now: start + .seconds(2), preferring: challenged).action
        guard case .reuse(let reused) = preferred else {
            Issue.record("the preferred idle connection is reused")
            return
        }
        #expect(reused === challenged)
        #expect(machine.counts(origin) == (idle: 1, leased: 1, opening: 0, waiting: 0))
        // A preferred connection that is no longer idle (or was closed) is not waited for.
        let gone = machine.acquire(origin, waiter: 4, now: start + .seconds(2), preferring: FakeConnection()).action
        guard case .reuse(let other) = gone else {
            Issue.record("without the preferred one, the newest idle connection is reused")
            return
        }
        #expect(other === newer)
        let closed = machine.acquire(origin, waiter: 5, now: start + .seconds(2), preferring: newer) { _ in false }
        guard case .connect = closed.action else {
            Issue.record("a preferred connection known closed is not handed out")
            return
        }
    }

    @Test func idleConnectionsKnownClosedAreSkippedAndHandedBackForClosing() {
        var machine = PoolStateMachine<FakeConnection, FakeConnection>(limit: 4, idleTimeout: .seconds(10))
        _ = machine.acquire(origin, waiter: 1, now: start)
        _ = machine.acquire(origin, waiter: 2, now: start)
        machine.opened(origin)
        machine.opened(origin)
        let open = FakeConnection()
        let closed = FakeConnection()
        _ = machine.release(origin, open, reusable: true, now: start)
        _ = machine.release(origin, closed, reusable: true, now: start + .seconds(1))

        let (action, skipped) = machine.acquire(origin, waiter: 3, now: start + .seconds(2)) { $0 !== closed }
        guard case .reuse(let reused) = action else {
            Issue.record("the connection still open is reused")
            return
        }
        #expect(reused === open)
        #expect(skipped.count == 1 && skipped.first === closed)
        #expect(machine.counts(origin).idle == 0 && machine.counts(origin).leased == 1)
    }

    @Test func cancelledWaitersLeaveTheLineAndFailedOpensFreeTheirSlot() {
        var machine = PoolStateMachine<FakeConnection, FakeConnection>(limit: 1, idleTimeout: .seconds(60))
        _ = machine.acquire(origin, waiter: 1, now: start)
        _ = machine.acquire(origin, waiter: 2, now: start)
        _ = machine.acquire(origin, waiter: 3, now: start)
        let cancelled = machine.cancelWaiter(origin, 2)
        let cancelledAgain = machine.cancelWaiter(origin, 2)
        #expect(cancelled && !cancelledAgain)
        guard case .connect(let waiter)? = machine.openFailed(origin) else {
            Issue.record("the failed open's slot goes to the next waiter")
            return
        }
        #expect(waiter == 3)
        #expect(machine.counts(origin) == (idle: 0, leased: 0, opening: 1, waiting: 0))
    }

    @Test func evictionAndShutdownEmptyTheIdleList() {
        var machine = PoolStateMachine<FakeConnection, FakeConnection>(limit: 2, idleTimeout: .seconds(1))
        _ = machine.acquire(origin, waiter: 1, now: start)
        machine.opened(origin)
        _ = machine.release(origin, FakeConnection(), reusable: true, now: start)
        #expect(machine.hasIdleConnections)
        let early = machine.evictExpired(now: start + .milliseconds(500))
        let late = machine.evictExpired(now: start + .seconds(2))
        #expect(early.isEmpty && late.count == 1)
        #expect(!machine.hasIdleConnections)
        _ = machine.acquire(origin, waiter: 2, now: start)
        machine.opened(origin)
        _ = machine.release(origin, FakeConnection(), reusable: true, now: start)
        let removed = machine.removeAllIdle()
        #expect(removed.count == 1)
    }

    // MARK: HTTP/2

    /// A stand-in for an HTTP/2 connection: a number of free stream slots, and whether it is usable.
    final class FakeMultiplexed {
        var free: Int
        var usable = true
        init(free: Int) { self.free = free }
        func reserve() -> Bool {
            guard free > 0 else { return false }
            free -= 1
            return true
        }
    }

    typealias Machine = PoolStateMachine<FakeConnection, FakeMultiplexed>

    func claim(
        _ machine: inout Machine,
        _ waiter: Int,
        avoiding: FakeMultiplexed? = nil
    ) -> Machine.StreamClaim {
        machine.claimStream(
            origin,
            waiter: waiter,
            avoiding: avoiding,
            isUsable: \.usable,
            reserve: { $0.reserve() }
        )
    }

    @Test func oneRequestOpensTheFirstConnectionWhileTheOthersWaitThenAllShareIt() {
        var machine = Machine(limit: 2, idleTimeout: .seconds(60))
        guard case .open = claim(&machine, 1), case .wait = claim(&machine, 2), case .wait = claim(&machine, 3) else {
            Issue.record("the first claimant opens, the others wait for what it learns")
            return
        }
        let connection = FakeMultiplexed(free: 2)
        _ = connection.reserve()  // the opener's own stream
        let wokenByTheOpen = machine.streamConnectionOpened(origin, connection)
        #expect(wokenByTheOpen == [2, 3])
        guard case .stream(let second) = claim(&machine, 2), second === connection,
            case .open = claim(&machine, 3)
        else {
            Issue.record("woken waiters take its free slot, then open the next connection within the limit")
            return
        }
        #expect(machine.multiplexedConnections.count == 1)
    }

    @Test func anOriginThatAnswersHTTP1IsSentToTheHTTP1SubStateFromThenOn() {
        var machine = Machine(limit: 4, idleTimeout: .seconds(60))
        guard case .open = claim(&machine, 1), case .wait = claim(&machine, 2) else {
            Issue.record("expected an open and a wait")
            return
        }
        let wokenByHTTP1 = machine.learnedHTTP1(origin, adopting: true)
        #expect(wokenByHTTP1 == [2])
        guard case .http1 = claim(&machine, 2) else {
            Issue.record("the origin speaks HTTP/1.1")
            return
        }
        // The connection that found out is an HTTP/1.1 one in use, counted against the limit.
        #expect(machine.counts(origin) == (idle: 0, leased: 1, opening: 0, waiting: 0))
        // Even with nothing else left for the origin, what was learned is kept.
        _ = machine.release(origin, FakeConnection(), reusable: false, now: start)
        guard case .http1 = claim(&machine, 3) else {
            Issue.record("what was learned stays")
            return
        }
    }

    @Test func aFullOrRefusingConnectionIsPassedOverAndAFailedOpenLetsTheNextTry() {
        var machine = Machine(limit: 1, idleTimeout: .seconds(60))
        _ = claim(&machine, 1)
        let only = FakeMultiplexed(free: 1)
        _ = machine.streamConnectionOpened(origin, only)
        // At the limit, the connection to avoid is better than none.
        guard case .stream(let avoided) = claim(&machine, 2, avoiding: only), avoided === only else {
            Issue.record("at the limit the avoided connection is used")
            return
        }
        // Full, at the limit: wait for a slot.
        guard case .wait = claim(&machine, 3) else {
            Issue.record("a full connection at the limit means waiting")
            return
        }
        only.free = 1
        let wokenBySlot = machine.slotFreed(origin)
        #expect(wokenBySlot == [3])
        let wokenAgain = machine.slotFreed(origin)
        #expect(wokenAgain.isEmpty)
        // Retired: forgotten, and the next claimant opens again; a failed open passes the task on.
        only.usable = false
        let wokenByRetirement = machine.retired(origin, only)
        #expect(wokenByRetirement.isEmpty)
        guard case .open = claim(&machine, 3), case .wait = claim(&machine, 4) else {
            Issue.record("a retired connection is replaced")
            return
        }
        let cancelled = machine.cancelWaiter(origin, 4)
        #expect(cancelled)
        let cancelledAgain = machine.cancelWaiter(origin, 4)
        #expect(!cancelledAgain)
        _ = claim(&machine, 5)
        let wokenByFailure = machine.streamConnectionFailed(origin)
        #expect(wokenByFailure == [5])
        guard case .open = claim(&machine, 5) else {
            Issue.record("after a failed open the next claimant tries")
            return
        }
    }
}
