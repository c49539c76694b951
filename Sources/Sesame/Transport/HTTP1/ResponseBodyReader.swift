import FoundationEssentials
import Glibc

/// Reads one response off a leased connection: the head, then the body (de-chunked and decoded),
/// then gives the connection back to the pool (reusable or not). Used by one task at a time.
final class ResponseBodyReader: ResponseReader {
    private let lease: ConnectionPool.Lease
    private let pool: ConnectionPool
    private let url: URL
    private let isHeadRequest: Bool
    /// The decoded-body limit, nil when bodies are not decoded.
    private let decodedBodyLimit: Int?
    private let onWireEvent: (@Sendable (WireEvent) -> Void)?
    private let limits: ReadLimits
    private let requestAsksToClose: Bool
    private var parser: HTTP1ResponseParser
    private var events: [HTTP1ResponseParser.Event] = []
    private var inflater: (any BodyDecoder)?
    private var released = false
    private var reuseForbidden = false
    private var ended = false
    private(set) var receivedAnyByte = false
    private(set) var trailers = HTTPHeaders()
    private(set) var response: HTTPResponse?

    init(
        lease: ConnectionPool.Lease,
        pool: ConnectionPool,
        request: HTTPRequest,
        settings: ExchangeSettings,
        timeout: Duration,
        deadline: ContinuousClock.Instant,
        requestAsksToClose: Bool
    ) {
        self.lease = lease
        self.pool = pool
        url = request.url
        isHeadRequest = request.method.caseInsensitiveEquals("HEAD")
        decodedBodyLimit = settings.decodedBodyLimit
        onWireEvent = settings.onWireEvent
        limits = ReadLimits(timeout: timeout, deadline: deadline, clock: lease.connection.loop.clock)
        self.requestAsksToClose = requestAsksToClose
        self.parser = HTTP1ResponseParser(requestMethod: request.method)
    }

    deinit {
        if !released { pool.release(lease, reusable: false) }
    }

    /// After `Expect: 100-continue`: true to send the body (100 arrived, or `wait` passed);
    /// false when a final response came first (the body is then not sent and the connection not reused).
    /// A server need not answer the expectation at all (RFC 9110 section 10.1.1: an HTTP/1.0
    /// server or one that ignores it waits for the body), so silence is no error.
    func awaitContinue(within wait: Duration) async throws -> Bool {
        let loop = lease.connection.loop
        let until = loop.now + wait
        while loop.now < until {
            let remaining = loop.now.duration(to: until)
            guard let bytes = try await lease.connection.read(maxLength: 65_536, waitingAtMost: remaining) else {
                return true
            }
            try ingest(bytes)
            while let event = events.first {
                if case .informational(let head) = event, head.status == 100 {
                    report(head)
                    events.removeFirst()
                    return true
                }
                if case .head = event { return false }
                events.removeFirst()
            }
        }
        return true
    }

    /// Reads until the final response head, first sending `request` when given (one loop trip
    /// for both).
    func readHead(sending request: [UInt8]? = nil) async throws {
        if let request { try ingest(try await readMore(sendingFirst: request)) }
        while response == nil {
            if let event = events.first {
                events.removeFirst()
                switch event {
                case .informational(let head): report(head)
                case .head(let head): try accept(head)
                case .body, .end: throw SesameError(.protocolError, "a body arrived before the response head")
                }
                continue
            }
            try ingest(try await readMore())
        }
    }

    /// The next bytes, within the idle timeout and the task's overall deadline.
    private func readMore(sendingFirst request: [UInt8]? = nil) async throws -> [UInt8] {
        let connection = lease.connection
        return try await limits.wait { limit in
            if let request { return try await connection.writeThenRead(request, timeout: limit) }
            return try await connection.read(maxLength: 65_536, timeout: limit)
        }
    }

    /// The next piece of the (decoded) body, or nil at its end.
    /// How many bytes `next()` still delivers, when the framing says (Content-Length, or the
    /// whole body already here) and the body is not decoded; nil otherwise.
    var bodyLength: Int? {
        guard inflater == nil, !ended else { return nil }
        var queued = 0
        var complete = false
        for event in events {
            if case .body(let bytes) = event { queued += bytes.count }
            if case .end = event { complete = true }
        }
        if complete { return queued }
        guard let remaining = parser.fixedBodyRemaining, remaining <= UInt64(Int.max - queued) else { return nil }
        return queued + Int(remaining)
    }

    func next() async throws -> [UInt8]? {
        do {
            while true {
                // What the last read decodes to comes out a piece at a time, before the next read.
                if let inflater, !inflater.needsInput, let piece = try inflater.nextPiece() { return piece }
                if let event = events.first {
                    events.removeFirst()
                    switch event {
                    case .body(let bytes):
                        if let inflater {
                            inflater.feed(bytes)
                            continue
                        }
                        return bytes
                    case .end(let fields, let reusable):
                        try inflater?.finish()
                        trailers = fields
                        ended = true
                        release(reusable: reusable && !requestAsksToClose && !lease.connection.closedWithoutNotify)
                        return nil
                    case .head, .informational:
                        throw SesameError(.protocolError, "a second response head arrived")
                    }
                }
                if ended { return nil }
                try ingest(try await readMore())
            }
        } catch {
            abandon()
            throw error
        }
    }

    /// The connection must not carry another request after this one.
    func forbidReuse() { reuseForbidden = true }

    var exclusiveConnection: Connection? { lease.connection }

    var tlsInfo: TLSConnectionInfo? { lease.connection.tlsInfo }

    func retireConnection() { forbidReuse() }

    /// Gives up on the response: the connection is closed, not reused.
    func abandon() { release(reusable: false) }

    private func release(reusable: Bool) {
        guard !released else { return }
        released = true
        pool.release(lease, reusable: reusable && !reuseForbidden)
    }

    private func ingest(_ bytes: [UInt8]) throws {
        if bytes.isEmpty {
            events += try parser.endOfInput()
        } else {
            receivedAnyByte = true
            let more = try parser.feed(bytes)
            if events.isEmpty { events = more } else { events += more }  // mostly empty: no copy then
        }
    }

    private func accept(_ head: HTTP1ResponseHead) throws {
        report(head)
        let response = HTTPResponse(
            status: head.status,
            reason: head.reason,
            version: head.minorVersion == 1 ? "HTTP/1.1" : "HTTP/1.\(head.minorVersion)",
            headers: head.headers,
            url: url
        )
        inflater = try BodyDecoding.decoder(for: head.headers, limit: decodedBodyLimit, isHeadRequest: isHeadRequest)
        self.response = response
    }

    /// Tells the wire-event observer, if any, that a head (1xx or final) arrived.
    private func report(_ head: HTTP1ResponseHead) {
        guard let observer = onWireEvent else { return }
        let lines =
            ["HTTP/1.\(head.minorVersion) \(head.status)\(head.reason.isEmpty ? "" : " " + head.reason)"]
            + head.headers.map { "\($0.name): \($0.value)" }
        observer(.responseHeadReceived(lines.joined(separator: "\r\n")))
    }
}
