import Testing

@testable import Sesame

/// The read state alone decides what the loop watches a socket for (with the input's own fact:
/// its end).
@Suite struct ReadStateTests {
    let readable = EpollEvents.readable

    @Test func eachStateWatchesWhatItsReaderNeeds() {
        let expected: [(ReadState, UInt32)] = [
            (.inactive, 0),
            (.handshaking, readable),
            (.awaitingDecision, 0),
            (.idle, readable),
            (.holdingUnsolicitedInput, 0),
            (.loopReading, readable),
        ]
        for (state, interest) in expected {
            #expect(state.interest(inputEnded: false) == interest, "\(state)")
            #expect(state.interest(inputEnded: true) == 0, "an ended input is never watched")
        }
    }

    @Test func aReadTheLoopServesWatchesUntilAnsweredThenTheIdleConnectionStaysWatched() {
        var state = ReadState.idle
        state.readStarted()
        #expect(state == .loopReading)
        state.readAnswered()
        #expect(state == .idle)
        state.unaskedBytesArrived()
        #expect(state == .holdingUnsolicitedInput, "bytes nobody asked for stop the watch")
        state.unaskedBytesArrived()
        #expect(state == .holdingUnsolicitedInput)
        state.readStarted()
        #expect(state == .loopReading, "the next read watches again")
    }

    @Test func aDecisionStopsTheWatchUntilItIsAnswered() {
        var state = ReadState.handshaking
        state.decisionAsked()
        #expect(state == .awaitingDecision)
        #expect(state.interest(inputEnded: false) == 0)
        state.readStarted()
        state.unaskedBytesArrived()
        #expect(state == .awaitingDecision, "read events do not apply during the handshake")
        state.decisionAnswered()
        #expect(state == .handshaking)
    }

    @Test func eventsThatDoNotApplyLeaveTheStateAlone() {
        for start: ReadState in [.inactive, .handshaking, .awaitingDecision] {
            var state = start
            state.readAnswered()
            state.unaskedBytesArrived()
            #expect(state == start)
        }
    }
}
