import Testing

@testable import Sesame

/// The slot the pool gives for opening a connection: whoever holds it makes the connection, and
/// one dropped unused gives the origin's turn to the next request waiting.
@Suite struct ConnectionPoolSlotTests {
    let origin = Origin(scheme: "https", host: "h.test", port: 443)

    func slot(_ grant: ConnectionPool.Grant, _ where: SourceLocation = #_sourceLocation) -> ConnectionPool.OpeningSlot?
    {
        guard case .open(let slot) = grant else {
            Issue.record("expected a slot to open a connection, got \(grant)", sourceLocation: `where`)
            return nil
        }
        return slot
    }

    @Test(arguments: [false, true])
    func aSlotDroppedOrFailedGoesToTheNextRequestWaiting(failedExplicitly: Bool) async throws {
        let loop = try EventLoop(name: "pool-slot")
        defer { loop.shutdown() }
        let pool = ConnectionPool(limit: 1, idleTimeout: .seconds(60), loop: loop)
        let deadline = loop.now + .seconds(60)
        var first = slot(try await pool.carrier(for: origin, http2: nil, deadline: deadline))
        #expect(first?.offersHTTP2 == false)
        // The origin's one connection is being opened: the next request waits for it.
        let second = Task { try await pool.carrier(for: origin, http2: nil, deadline: deadline) }
        while pool.totals.waiting == 0 { await Task.yield() }
        if failedExplicitly, let first { pool.openFailed(first) }
        first = nil
        let next = slot(try await second.value)
        #expect(next?.origin == origin)
        #expect(pool.totals.opening == 1 && pool.totals.waiting == 0)
    }

    @Test func aSlotForAStreamLearnsHTTP2AndAFailedOneLetsTheNextRequestOpen() async throws {
        let loop = try EventLoop(name: "pool-stream-slot")
        defer { loop.shutdown() }
        let pool = ConnectionPool(limit: 4, idleTimeout: .seconds(60), loop: loop)
        let deadline = loop.now + .seconds(60)
        let first = slot(try await pool.carrier(for: origin, http2: .negotiated, deadline: deadline))
        #expect(first?.offersHTTP2 == true)
        // While the first connection learns whether the origin speaks HTTP/2, the next stream waits.
        let second = Task { try await pool.carrier(for: origin, http2: .negotiated, deadline: deadline) }
        while pool.totals.waiting == 0 { await Task.yield() }
        if let first { pool.openFailed(first) }
        #expect(slot(try await second.value)?.offersHTTP2 == true)
    }
}
