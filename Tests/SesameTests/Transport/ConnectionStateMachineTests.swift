import Testing

@testable import Sesame

/// The connection's life without a socket: its clocks, its stops for decisions and what it
/// watches the socket for, on instants the test chooses.
@Suite struct ConnectionStateMachineTests {
    let start = ContinuousClock.now

    func machine() -> ConnectionStateMachine {
        ConnectionStateMachine(peer: "example.test:443", handshakeTimeout: .seconds(10))
    }

    @Test func connectingEndsAtTheConnectTimeout() {
        var machine = machine()
        #expect(machine.start(connectTimeout: .seconds(5), now: start) == .connect)
        #expect(machine.nextDeadline == start + .seconds(5))
        #expect(machine.deadlinePassed(now: start + .seconds(4)) == .none)
        guard case .fail(let error) = machine.deadlinePassed(now: start + .seconds(5)) else {
            Issue.record("no failure at the deadline")
            return
        }
        #expect(error.code == .connectTimeout)
        #expect(error.detail.contains("no TCP connection"))
        #expect(machine.phase == .closed)
        #expect(machine.nextDeadline == nil)
    }

    @Test func theHandshakeClockStandsStillWhileADecisionIsAsked() {
        var machine = machine()
        _ = machine.start(connectTimeout: .seconds(60), now: start)
        #expect(machine.tcpConnected(usesTLS: true, now: start + .seconds(1)) == .driveHandshake)
        #expect(machine.nextDeadline == start + .seconds(11))
        #expect(machine.handshakeStepped(.decideTrust(resumed: false)) == .askTrust(resumed: false))
        #expect(machine.phase == .deciding)
        // Only connecting as a whole bounds the decision (a delegate may take its time).
        #expect(machine.nextDeadline == start + .seconds(60))
        #expect(machine.interest(protocolWantsInput: true, hasPendingOutput: false) == 0)
        #expect(machine.decided(now: start + .seconds(30)) == .driveHandshake)
        #expect(machine.nextDeadline == start + .seconds(40))
        guard case .fail(let error) = machine.deadlinePassed(now: start + .seconds(40)) else {
            Issue.record("the handshake went on past its timeout")
            return
        }
        #expect(error.code == .timeout)
    }

    @Test func theEndOfInputDuringADecisionFailsTheConnection() {
        var machine = machine()
        _ = machine.start(connectTimeout: .seconds(60), now: start)
        _ = machine.tcpConnected(usesTLS: true, now: start)
        _ = machine.handshakeStepped(.decideIdentity)
        guard case .fail(let error) = machine.inputEnded() else {
            Issue.record("the ended input was not a failure")
            return
        }
        #expect(error.code == .connectionClosed)
        #expect(machine.failed(SesameError(.ioError, "later")) == .none, "a connection fails once")
    }

    @Test func theEndOfInputDuringTheHandshakeIsReadBeforeItFails() {
        var machine = machine()
        _ = machine.start(connectTimeout: .seconds(60), now: start)
        _ = machine.tcpConnected(usesTLS: true, now: start)
        // What came before the end (an alert) explains it better: the handshake runs once more.
        #expect(machine.inputEnded() == .driveHandshake)
        #expect(machine.handshakeStepped(.needsInput) == .failHandshakeInputEnded)
    }

    @Test func anEstablishedConnectionReadsOnlyWhileItsProtocolTakesInput() {
        var machine = machine()
        _ = machine.start(connectTimeout: .seconds(5), now: start)
        #expect(machine.tcpConnected(usesTLS: false, now: start) == .established)
        #expect(machine.nextDeadline == nil)
        #expect(machine.interest(protocolWantsInput: true, hasPendingOutput: false) == EpollEvents.readable)
        #expect(machine.interest(protocolWantsInput: false, hasPendingOutput: false) == 0)
        #expect(machine.interest(protocolWantsInput: false, hasPendingOutput: true) == EpollEvents.writable)
        _ = machine.inputEnded()
        #expect(machine.interest(protocolWantsInput: true, hasPendingOutput: false) == 0)
    }

    @Test func aTunnelsHandshakeIsBoundedLikeTheFirst() {
        var machine = machine()
        _ = machine.start(connectTimeout: .seconds(5), now: start)
        _ = machine.tcpConnected(usesTLS: false, now: start)
        let later = start + .seconds(100)
        #expect(
            machine.tlsStarted(connectTimeout: .seconds(5), handshakeTimeout: .seconds(3), now: later)
                == .driveHandshake
        )
        #expect(machine.nextDeadline == later + .seconds(3))
        #expect(machine.handshakeStepped(.established) == .established)
        #expect(machine.nextDeadline == nil)
    }
}
