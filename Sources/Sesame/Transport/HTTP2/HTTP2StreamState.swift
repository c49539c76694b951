/// What one stream of an ``HTTP2Connection`` received and its reader has not taken yet, and who
/// waits for it. A value in the connection's state machine, on its loop.
struct HTTP2StreamState {
    /// What a reader takes from a stream, in the order it came.
    enum Item: Sendable {
        /// A response head: informational (1xx) or final.
        case head(status: Int, fields: HTTPHeaders)
        case data([UInt8])
        /// Trailer fields after the body (an `.end` follows).
        case trailers(HTTPHeaders)
        /// The response is complete.
        case end
    }

    private var items: [Item] = []
    private var taken = 0
    private var informationalHeads = 0
    /// Why the stream ended before its response was complete; handed over once the items that
    /// came before it are taken.
    private(set) var failure: (any Error)?
    /// A final head arrived (a request body still being sent is no longer needed once the
    /// response is complete).
    private(set) var answered = false
    private(set) var ended = false
    /// Something of the response arrived (a request on it was processed, at least in part).
    private(set) var receivedAny = false
    /// Body bytes queued here and not taken: they are reported consumed when the stream is
    /// given up, so that the connection's window stays open.
    private(set) var unconsumedBytes = 0
    /// The reader, waiting for the next item.
    var waiter: CheckedContinuation<Void, any Error>?
    /// The request body's sender, waiting for room.
    var bodyWaiter: CheckedContinuation<Void, any Error>?
    /// When the current wait ends with a timeout, and what the timeout says; a nil message ends
    /// only the wait (the stream goes on).
    var deadline: (at: ContinuousClock.Instant, message: String?)?

    var hasItem: Bool { taken < items.count || failure != nil }

    /// The request's stream is done with, as far as a body sender is concerned.
    var isFinished: Bool { ended || failure != nil }

    /// The most informational (1xx) heads one response may have, as for HTTP/1.1.
    static let maximumInformationalHeads = HTTP1ParserLimits().maximumInformationalResponses

    mutating func append(_ item: Item) {
        guard !isFinished else { return }
        receivedAny = true
        switch item {
        case .head(let status, _) where status < 200:
            informationalHeads += 1
            guard informationalHeads <= Self.maximumInformationalHeads else {
                fail(
                    SesameError(
                        .protocolError,
                        "HTTP/2: more than \(Self.maximumInformationalHeads) 1xx responses on one stream"
                    )
                )
                return
            }
        case .head: answered = true
        case .data(let bytes): unconsumedBytes += bytes.count
        case .end: ended = true
        case .trailers: break
        }
        items.append(item)
    }

    /// Ends the stream with `error` unless it already ended.
    mutating func fail(_ error: any Error) {
        guard !isFinished else { return }
        failure = error
    }

    /// The next item, left in place, or the failure once every item before it is taken; nil
    /// when nothing waits.
    func peek() throws -> Item? {
        guard taken < items.count else {
            if let failure { throw failure }
            return nil
        }
        return items[taken]
    }

    /// The next item, or the failure once every item before it is taken; nil when nothing waits.
    mutating func take() throws -> Item? {
        guard taken < items.count else {
            if let failure { throw failure }
            return nil
        }
        let item = items[taken]
        taken += 1
        if taken == items.count {
            items.removeAll(keepingCapacity: true)
            taken = 0
        }
        if case .data(let bytes) = item { unconsumedBytes -= bytes.count }
        return item
    }

    /// Applies `change`, then takes the waiters it released.
    mutating func change(
        _ change: (inout HTTP2StreamState) -> Void,
        waking wake: inout [CheckedContinuation<Void, any Error>]
    ) {
        change(&self)
        takeWaiters(&wake)
    }

    /// The continuations to resume now that something changed (both, when the stream finished).
    mutating func takeWaiters(_ into: inout [CheckedContinuation<Void, any Error>]) {
        if let waiter, hasItem {
            into.append(waiter)
            self.waiter = nil
        }
        if let bodyWaiter, isFinished {
            into.append(bodyWaiter)
            self.bodyWaiter = nil
        }
    }
}
