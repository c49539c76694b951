/// A strict, bounded HTTP/1.1 response parser (RFC 9112), as a value-type state machine: bytes in,
/// events out, no I/O.
///
/// It frames bodies by Content-Length, chunked transfer coding (extensions ignored, trailers kept)
/// or the end of the connection; knows which responses have no body (to HEAD, 1xx, 204, 304);
/// passes 1xx responses up before the final one; and rejects what it cannot frame safely with a
/// ``SesameError/Code/protocolError`` naming the problem. It never trusts a length it has not
/// validated and never buffers more than the limits allow.
struct HTTP1ResponseParser {
    enum Event: Equatable {
        /// A 1xx response (100 Continue, 103 Early Hints, ...); the final one follows.
        case informational(HTTP1ResponseHead)
        /// The final response head.
        case head(HTTP1ResponseHead)
        /// Body bytes, already de-chunked.
        case body([UInt8])
        /// The response is complete. `reusable` says whether the connection may carry another
        /// request.
        case end(trailers: HTTPHeaders, reusable: Bool)
    }

    enum State {
        case head
        case fixedBody(remaining: UInt64)
        case chunkSize
        case chunkData(remaining: UInt64)
        case chunkDataEnd
        case trailers
        case untilClose
        case done
    }

    private let isHeadRequest: Bool
    private let isConnectRequest: Bool
    let limits: HTTP1ParserLimits
    var state = State.head
    var buffer: [UInt8] = []
    var position = 0
    var headBytes = 0
    /// The status line of the head being read, once it arrived.
    private var statusLine: (minor: Int, status: Int, reason: String)?
    /// The header (or trailer) fields received so far, parsed as each line arrives.
    var fields = HTTPHeaders()
    private var informationalCount = 0
    private var reusable = true

    /// - Parameters:
    ///   - requestMethod: the method of the request this response answers (HEAD responses have no body).
    ///   - limits: size limits.
    init(requestMethod: String, limits: HTTP1ParserLimits = HTTP1ParserLimits()) {
        self.isHeadRequest = requestMethod.caseInsensitiveEquals("HEAD")
        self.isConnectRequest = requestMethod.caseInsensitiveEquals("CONNECT")
        self.limits = limits
    }

    /// True once the response is complete.
    var isComplete: Bool {
        if case .done = state { return true }
        return false
    }

    /// Body bytes still to come of a body framed by Content-Length; nil for other framings.
    var fixedBodyRemaining: UInt64? {
        if case .fixedBody(let remaining) = state { return remaining }
        return nil
    }

    /// Feeds bytes from the connection; returns what they completed.
    mutating func feed(_ bytes: [UInt8]) throws -> [Event] {
        if case .done = state {
            if bytes.isEmpty { return [] }
            throw protocolError("\(bytes.count) bytes arrived after the end of the response")
        }
        if position == buffer.count {
            buffer = bytes  // nothing pending: take the bytes as they are, without copying
            position = 0
        } else {
            buffer.append(contentsOf: bytes)
        }
        var events: [Event] = []
        events.reserveCapacity(4)  // a head, a body and the end: one allocation, not three
        try parse(into: &events)
        compact()
        return events
    }

    /// Bytes received past the end of the response (after a `CONNECT` 2xx: the tunnel's first bytes).
    mutating func takeUnparsedBytes() -> [UInt8] {
        let rest = Array(buffer[position...])
        buffer = []
        position = 0
        return rest
    }

    /// The connection ended. Completes a body delimited by the close; anything else unfinished is an error.
    mutating func endOfInput() throws -> [Event] {
        switch state {
        case .done:
            return []
        case .untilClose:
            state = .done
            var events: [Event] = []
            if position < buffer.count { events.append(.body(Array(buffer[position...]))) }
            buffer = []
            position = 0
            events.append(.end(trailers: HTTPHeaders(), reusable: false))
            return events
        case .head:
            if buffer.count == position && statusLine == nil && informationalCount == 0 {
                throw SesameError(.connectionClosed, "the server closed the connection without sending a response")
            }
            throw protocolError("the connection closed before the response head was complete")
        case .fixedBody(let remaining):
            throw protocolError("the connection closed with \(remaining) body bytes still to come")
        case .chunkSize, .chunkData, .chunkDataEnd, .trailers:
            throw protocolError("the connection closed in the middle of a chunked body")
        }
    }

    // MARK: - Parsing

    private mutating func parse(into events: inout [Event]) throws {
        while true {
            switch state {
            case .head:
                guard try headLine(into: &events) else { return }
            case .fixedBody(let remaining):
                let available = buffer.count - position
                guard available > 0 else { return }
                let take = Int(min(UInt64(available), remaining))
                events.append(.body(takeBody(take)))
                if remaining == UInt64(take) {
                    finish(trailers: HTTPHeaders(), events: &events)
                } else {
                    state = .fixedBody(remaining: remaining - UInt64(take))
                }
            case .chunkSize:
                guard let line = try nextLine(limit: limits.maximumLineLength, what: "chunk-size line") else { return }
                let size = try Self.chunkSize(buffer[line])
                state = size == 0 ? .trailers : .chunkData(remaining: size)
                fields = HTTPHeaders()
                headBytes = 0
            case .chunkData(let remaining):
                let available = buffer.count - position
                guard available > 0 else { return }
                let take = Int(min(UInt64(available), remaining))
                events.append(.body(takeBody(take)))
                state = remaining == UInt64(take) ? .chunkDataEnd : .chunkData(remaining: remaining - UInt64(take))
            case .chunkDataEnd:
                guard let line = try nextLine(limit: 2, what: "chunk terminator") else { return }
                guard line.isEmpty else { throw protocolError("chunk data is longer than its declared size") }
                state = .chunkSize
            case .trailers:
                guard try trailerLine(into: &events) else { return }
            case .untilClose:
                if position < buffer.count {
                    events.append(.body(Array(buffer[position...])))
                    position = buffer.count
                }
                return
            case .done:
                // Bytes after a complete response (a server bug): the response stands, the
                // connection is not reused (see `finish`), and the excess is dropped.
                position = buffer.count
                return
            }
        }
    }

    /// Takes one line of the response head: the status line, a field, or the empty line that
    /// ends the head (then the head, or a 1xx response, is an event). False when the line has not
    /// all arrived.
    private mutating func headLine(into events: inout [Event]) throws -> Bool {
        guard let line = try nextLine(limit: limits.maximumLineLength, what: "response head line") else {
            return false
        }
        headBytes += line.count + 2
        guard headBytes <= limits.maximumHeadSize else {
            throw protocolError("the response head is larger than \(limits.maximumHeadSize) bytes")
        }
        if !line.isEmpty {
            if statusLine == nil {
                if buffer[line].allSatisfy({ $0 == 0x20 || $0 == 0x09 }) { return true }
                statusLine = try Self.statusLine(buffer[line])
            } else {
                try appendFieldLine(line, section: "header")
            }
            return true
        }
        guard let (minor, status, reason) = statusLine else { return true }  // empty lines before it are tolerated
        let head = HTTP1ResponseHead(minorVersion: minor, status: status, reason: reason, headers: fields)
        statusLine = nil
        fields = HTTPHeaders()
        headBytes = 0
        if head.isInformational && head.status != 101 {
            informationalCount += 1
            guard informationalCount <= limits.maximumInformationalResponses else {
                throw protocolError("more than \(limits.maximumInformationalResponses) 1xx responses")
            }
            events.append(.informational(head))
            return true
        }
        events.append(.head(head))
        try startBody(for: head, events: &events)
        return true
    }

    /// Takes one line of the trailer section; the empty line ends the response. False when the
    /// line has not all arrived.
    private mutating func trailerLine(into events: inout [Event]) throws -> Bool {
        guard let line = try nextLine(limit: limits.maximumLineLength, what: "trailer line") else { return false }
        headBytes += line.count + 2
        guard headBytes <= limits.maximumHeadSize else {
            throw protocolError("the trailer section is larger than \(limits.maximumHeadSize) bytes")
        }
        if line.isEmpty {
            let trailers = fields
            fields = HTTPHeaders()
            finish(trailers: trailers, events: &events)
        } else {
            try appendFieldLine(line, section: "trailer")
        }
        return true
    }

    private mutating func finish(trailers: HTTPHeaders, events: inout [Event]) {
        state = .done
        // Anything already received beyond the response means the stream is out of step.
        events.append(.end(trailers: trailers, reusable: reusable && position == buffer.count))
    }

    private mutating func startBody(for head: HTTP1ResponseHead, events: inout [Event]) throws {
        let (framing, reusable) = try Self.framing(
            of: head,
            isHeadRequest: isHeadRequest,
            isConnectRequest: isConnectRequest
        )
        self.reusable = reusable
        switch framing {
        case .tunnel:
            // RFC 9110 9.3.6: the tunnel starts right after the head; what follows is not HTTP.
            state = .done
            events.append(.end(trailers: HTTPHeaders(), reusable: false))
        case .none, .fixed(0): finish(trailers: HTTPHeaders(), events: &events)
        case .fixed(let length): state = .fixedBody(remaining: length)
        case .chunked: state = .chunkSize
        case .untilClose: state = .untilClose
        }
    }
}
