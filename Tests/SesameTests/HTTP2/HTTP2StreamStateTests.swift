import Testing

@testable import Sesame

/// A stream's state with no connection: items in order, a failure only after what came before
/// it, the body bytes not yet taken, and which waiters a change wakes.
@Suite struct HTTP2StreamStateTests {
    @Test func itemsComeOutInOrderAndTheFailureLast() throws {
        var stream = HTTP2StreamState()
        stream.append(.head(status: 103, fields: [:]))
        stream.append(.head(status: 200, fields: ["content-length": "5"]))
        stream.append(.data(Array("hel".utf8)))
        stream.append(.data(Array("lo".utf8)))
        #expect(stream.answered && stream.receivedAny && !stream.isFinished)
        #expect(stream.unconsumedBytes == 5)
        stream.fail(SesameError(.streamReset, "reset"))
        #expect(stream.isFinished)
        stream.append(.data([1, 2, 3]))  // after the end: dropped
        guard case .head(103, _)? = try stream.take() else {
            Issue.record("103 first")
            return
        }
        guard case .head(200, _)? = try stream.take() else {
            Issue.record("then 200")
            return
        }
        guard case .data(let first)? = try stream.take() else {
            Issue.record("then data")
            return
        }
        #expect(first == Array("hel".utf8))
        #expect(stream.unconsumedBytes == 2)
        _ = try stream.take()
        #expect(stream.unconsumedBytes == 0)
        #expect(throws: SesameError.self) { try stream.take() }
    }

    @Test func anEndedStreamIgnoresALateFailure() throws {
        var stream = HTTP2StreamState()
        stream.append(.head(status: 204, fields: [:]))
        stream.append(.end)
        stream.fail(SesameError(.connectionClosed, "closed after the end"))
        #expect(stream.failure == nil)
        _ = try stream.take()
        guard case .end? = try stream.take() else {
            Issue.record("the end")
            return
        }
        #expect(try stream.take() == nil)
        #expect(!stream.hasItem)
    }

    @Test func anEmptyStreamHasNothingToTake() throws {
        var stream = HTTP2StreamState()
        #expect(try stream.take() == nil)
        #expect(!stream.hasItem && !stream.receivedAny)
    }

    @Test func endlessInformationalHeadsFailTheStream() throws {
        var stream = HTTP2StreamState()
        for _ in 0..<1000 { stream.append(.head(status: 103, fields: [:])) }
        #expect(stream.isFinished)
        var taken = 0
        let failure = #expect(throws: SesameError.self) {
            while try stream.take() != nil { taken += 1 }
        }
        #expect(taken == HTTP2StreamState.maximumInformationalHeads)
        #expect(failure?.code == .protocolError)
    }
}
