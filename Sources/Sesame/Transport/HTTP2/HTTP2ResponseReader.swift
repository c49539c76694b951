import FoundationEssentials
import Glibc

/// Reads one response off its HTTP/2 stream: the head, then the body (decoded), reporting what
/// it took so that the peer may send more, then gives the stream's slot back. Used by one task
/// at a time.
final class HTTP2ResponseReader: ResponseReader {
    private let connection: HTTP2Connection
    let stream: Int32
    private let url: URL
    private let isHeadRequest: Bool
    private let decodedBodyLimit: Int?
    private let onWireEvent: (@Sendable (WireEvent) -> Void)?
    private let limits: ReadLimits
    private var inflater: (any BodyDecoder)?
    private var finished = false
    private var ended = false
    private(set) var response: HTTPResponse?
    private(set) var trailers = HTTPHeaders()

    init(
        _ connection: HTTP2Connection,
        stream: Int32,
        request: HTTPRequest,
        settings: ExchangeSettings,
        timeout: Duration,
        deadline: ContinuousClock.Instant
    ) {
        self.connection = connection
        self.stream = stream
        url = request.url
        isHeadRequest = request.method.caseInsensitiveEquals("HEAD")
        decodedBodyLimit = settings.decodedBodyLimit
        onWireEvent = settings.onWireEvent
        limits = ReadLimits(timeout: timeout, deadline: deadline, clock: connection.loop.clock)
    }

    deinit {
        if !finished { connection.finish(stream) }
    }

    /// After `Expect: 100-continue`, with the request's HEADERS sent: true to send the body (a
    /// 100 arrived, or nothing did within `wait`); false when the final response (or the
    /// stream's end) came first: the body is not sent, and ``readHead()`` reads that response.
    func awaitContinue(within wait: Duration) async throws -> Bool {
        let until = min(connection.loop.now + wait, limits.deadline)
        while let item = try await connection.peek(on: stream, until: until) {
            guard case .head(let status, let fields) = item, status < 200 else { return false }
            _ = try await nextItem()
            report(status, fields)
            if status == 100 { return true }
        }
        return true
    }

    /// Reads until the final response head (informational ones are reported and passed over).
    func readHead() async throws {
        while response == nil {
            switch try await nextItem() {
            case .head(let status, let fields):
                report(status, fields)
                guard status >= 200 else { continue }
                inflater = try BodyDecoding.decoder(for: fields, limit: decodedBodyLimit, isHeadRequest: isHeadRequest)
                response = HTTPResponse(status: status, reason: "", version: "HTTP/2", headers: fields, url: url)
            case .data, .end, .trailers:
                throw SesameError(.protocolError, "HTTP/2: stream \(stream) ended before its response head")
            }
        }
    }

    var bodyLength: Int? {
        guard inflater == nil, !ended, let response else { return nil }
        if isHeadRequest || response.status == 204 || response.status == 304 { return 0 }
        // nghttp2 checks that DATA frames add up to Content-Length (RFC 9113 section 8.1.1).
        return response.headers.first("Content-Length").flatMap { Int($0) }
    }

    func next() async throws -> [UInt8]? {
        do {
            while true {
                if let inflater, !inflater.needsInput, let piece = try inflater.nextPiece() { return piece }
                if ended { return nil }
                switch try await nextItem() {
                case .data(let bytes):
                    connection.consumed(bytes.count, on: stream)
                    if let inflater {
                        inflater.feed(bytes)
                        continue
                    }
                    return bytes
                case .trailers(let fields):
                    trailers = fields
                case .end:
                    try inflater?.finish()
                    ended = true
                    release()
                    return nil
                case .head:
                    throw SesameError(.protocolError, "HTTP/2: a second response head arrived on stream \(stream)")
                }
            }
        } catch {
            abandon()
            throw error
        }
    }

    /// Resets the stream unless its response is complete; the connection goes on.
    func abandon() { release() }

    /// None: an HTTP/2 connection is shared by every stream.
    var exclusiveConnection: Connection? { nil }

    var tlsInfo: TLSConnectionInfo? { connection.connection.tlsInfo }

    /// Nothing to do: HTTP/2 servers authenticate each request (IIS answers NTLM with
    /// HTTP_1_1_REQUIRED, and the exchange goes on over HTTP/1.1).
    func retireConnection() {}

    private func release() {
        guard !finished else { return }
        finished = true
        connection.finish(stream)
    }

    /// The stream's next item, within the idle timeout and the task's overall deadline.
    private func nextItem() async throws -> HTTP2StreamState.Item {
        let (connection, stream) = (connection, stream)
        return try await limits.wait { limit in try await connection.next(on: stream, timeout: limit) }
    }

    private func report(_ status: Int, _ fields: HTTPHeaders) {
        guard let onWireEvent else { return }
        let lines = ["HTTP/2 \(status)"] + fields.map { "\($0.name): \($0.value)" }
        onWireEvent(.responseHeadReceived(lines.joined(separator: "\r\n")))
    }
}
