import Testing

@testable import Sesame

/// The read state alone decides what the loop watches a socket for (with the input's own facts:
/// its end, and the peer closing its side).
@Suite struct ReadStateTests {
    let readable = EpollEvents.readable
    let peerClosing = EpollEvents.peerClosed

    @Test func eachStateWatchesWhatItsReaderNeeds() {
        let expected: [(ReadState, UInt32)] = [
            (.inactive, 0),
            (.handshaking, readable),
            (.awaitingDecision, 0),
            (.idle, readable),
            (.holdingUnsolicitedInput, 0),
            (.loopReading, readable),
            (.callerWaiting, peerClosing),
            (.callerReading, peerClosing),
        ]
        for (state, interest) in expected {
            #expect(state.interest(inputEnded: false, peerClosed: false) == interest, "\(state)")
            #expect(state.interest(inputEnded: true, peerClosed: false) == 0, "an ended input is never watched")
        }
        #expect(ReadState.callerReading.interest(inputEnded: false, peerClosed: true) == 0)
        #expect(ReadState.loopReading.interest(inputEnded: false, peerClosed: true) == readable)
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

    @Test func aCallersReadsKeepOneWatchFromRequestToRequest() {
        var state = ReadState.idle
        state.readStarted()
        state.callerBeganWaiting()
        #expect(state == .callerWaiting)
        state.readAnswered()
        #expect(state == .callerWaiting, "answered on the caller's thread: still the caller's")
        state.callerStoppedWaiting(readStillWaiting: false)
        #expect(state == .callerReading)
        let between = state.interest(inputEnded: false, peerClosed: false)
        // The next request: the read starts on the caller's thread and waits there again.
        state.readStarted()
        #expect(state == .callerReading)
        state.callerBeganWaiting()
        #expect(state.interest(inputEnded: false, peerClosed: false) == between, "no epoll_ctl per request")
        // The wait runs out: the loop serves the read, and watches for reading again.
        state.callerStoppedWaiting(readStillWaiting: true)
        #expect(state == .loopReading)
        state.readAnswered()
        #expect(state == .idle)
    }

    @Test func aReadACallerStartedCanGoToTheLoop() {
        var state = ReadState.callerReading
        state.readStarted()
        state.readHandedToLoop()
        #expect(state == .loopReading)
        state.readHandedToLoop()
        #expect(state == .loopReading)
    }

    @Test func aDecisionStopsTheWatchUntilItIsAnswered() {
        var state = ReadState.handshaking
        state.decisionAsked()
        #expect(state == .awaitingDecision)
        #expect(state.interest(inputEnded: false, peerClosed: false) == 0)
        state.readStarted()
        state.unaskedBytesArrived()
        #expect(state == .awaitingDecision, "read events do not apply during the handshake")
        state.decisionAnswered()
        #expect(state == .handshaking)
    }

    @Test func eventsThatDoNotApplyLeaveTheStateAlone() {
        for start: ReadState in [.inactive, .handshaking, .awaitingDecision, .callerWaiting] {
            var state = start
            state.readAnswered()
            state.unaskedBytesArrived()
            state.readHandedToLoop()
            #expect(state == start)
        }
    }
}
