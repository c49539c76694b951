import Testing

@testable import Sesame

/// An HTTP/2 connection's streams without a socket or nghttp2: the session's events go in, and
/// the test reads what each stream's reader gets and what the connection is asked to do.
@Suite struct HTTP2ConnectionStateMachineTests {
    typealias Machine = HTTP2ConnectionStateMachine
    let origin = Origin(scheme: "https", host: "example.test", port: 443)

    func machine(streams: [Int32]) -> Machine {
        var machine = Machine(origin: origin)
        for id in streams { machine.opened(id) }
        return machine
    }

    func failure(of id: Int32, in machine: inout Machine) -> (any Error)? {
        do {
            while try machine.take(from: id) != nil {}
            return nil
        } catch {
            return error
        }
    }

    @Test func aStreamTheClientRefusedFailsWithWhatWasWrong() {
        var machine = machine(streams: [1, 3])
        var actions = Machine.Actions()
        machine.dispatch([.refused(stream: 1, reason: "a pseudo-header in the trailers")], into: &actions)
        let error = failure(of: 1, in: &machine) as? SesameError
        #expect(error?.code == .protocolError)
        #expect(error?.detail.contains("a pseudo-header in the trailers") == true)
        #expect(failure(of: 3, in: &machine) == nil, "the other stream goes on")
        #expect(!actions.retiredNow)
    }

    @Test func goAwayLeavesTheStreamsAboveItsLastUnprocessedAndRetiresTheConnection() {
        var machine = machine(streams: [1, 3, 5])
        var actions = Machine.Actions()
        machine.dispatch([.goAway(lastStreamID: 3, errorCode: 0, debug: "restart")], into: &actions)
        #expect(actions.retiredNow)
        #expect(machine.retired)
        #expect(failure(of: 1, in: &machine) == nil)
        #expect(failure(of: 3, in: &machine) == nil)
        let unprocessed = failure(of: 5, in: &machine) as? HTTP2Exchange.Unprocessed
        #expect(unprocessed?.certain == true)
        #expect(unprocessed?.requiresHTTP1 == false)
        #expect(unprocessed?.underlying.detail.contains("restart") == true)
    }

    @Test func aLostConnectionLetsOnlyTheStreamsThatReceivedNothingBeSentAgain() {
        var machine = machine(streams: [1, 3])
        var actions = Machine.Actions()
        machine.dispatch([.head(stream: 1, status: 200, fields: [:])], into: &actions)
        machine.fail(SesameError(.connectionReset, "reset by peer"), into: &actions)
        #expect(actions.retiredNow)
        _ = try? machine.take(from: 1)  // the head
        #expect((failure(of: 1, in: &machine) as? SesameError)?.code == .connectionReset)
        let unprocessed = failure(of: 3, in: &machine) as? HTTP2Exchange.Unprocessed
        #expect(unprocessed?.certain == false, "the server may have acted on it")
    }

    @Test func refusedAndHTTP1RequiredResetsMaySendTheRequestAgain() {
        var machine = machine(streams: [1, 3, 5])
        var actions = Machine.Actions()
        machine.dispatch(
            [
                .reset(stream: 1, errorCode: 0x7, reason: nil),
                .reset(stream: 3, errorCode: 0xd, reason: nil),
                .reset(stream: 5, errorCode: 0x2, reason: "internal"),
            ],
            into: &actions
        )
        #expect((failure(of: 1, in: &machine) as? HTTP2Exchange.Unprocessed)?.requiresHTTP1 == false)
        #expect((failure(of: 3, in: &machine) as? HTTP2Exchange.Unprocessed)?.requiresHTTP1 == true)
        #expect((failure(of: 5, in: &machine) as? SesameError)?.code == .streamReset)
    }

    @Test func bytesForAStreamGivenUpOnStillOpenTheConnectionsWindow() {
        var machine = machine(streams: [1])
        var actions = Machine.Actions()
        machine.dispatch(
            [.data(stream: 1, [1, 2, 3]), .data(stream: 7, [UInt8](repeating: 0, count: 40))],
            into: &actions
        )
        #expect(actions.consume.map(\.stream) == [7])
        #expect(actions.consume.map(\.count) == [40])
        #expect(machine.unconsumedBytes == 3)
        // Finishing a stream whose response is not complete resets it and returns its bytes.
        var finished = Machine.Actions()
        machine.finish(1, stillSending: false, into: &finished)
        #expect(finished.cancel == [1])
        #expect(finished.consume.map(\.count) == [3])
        #expect(failure(of: 1, in: &machine) is SesameError, "a finished stream is gone")
    }

    @Test func theStreamLimitFollowsThePeersSettingsWithinBounds() {
        var machine = machine(streams: [])
        var actions = Machine.Actions()
        machine.dispatch([.settings(maxConcurrentStreams: 0)], into: &actions)
        #expect(machine.maxConcurrentStreams == 1)
        machine.dispatch([.settings(maxConcurrentStreams: 1 << 30)], into: &actions)
        #expect(machine.maxConcurrentStreams == Machine.streamLimit)
    }

    @Test func aWaitPastItsDeadlineFailsItsStreamWithTheTimeoutAndResetsIt() async throws {
        var machine = machine(streams: [1])
        let now = ContinuousClock.now
        var actions = Machine.Actions()
        var waiting = true
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
            let registered = machine.waitForItem(on: 1, continuation, until: now + .seconds(1), message: "silent")
            #expect(registered)
            let early = machine.expire(now: now, into: &actions)
            #expect(early, "not yet")
            #expect(actions.wake.isEmpty)
            waiting = machine.expire(now: now + .seconds(1), into: &actions)
            for waiter in actions.wake { waiter.resume() }
        }
        #expect(!waiting)
        #expect(actions.cancel == [1])
        #expect((failure(of: 1, in: &machine) as? SesameError)?.detail == "silent")
    }
}
