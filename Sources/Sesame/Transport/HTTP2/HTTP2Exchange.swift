import FoundationEssentials
import Glibc

/// One request and the head of its response, on a stream of an ``HTTP2Connection``.
enum HTTP2Exchange {
    /// The server did not process the request: it may be sent again, on another connection.
    struct Unprocessed: Error {
        let underlying: SesameError
        /// The server said so (GOAWAY above the stream, REFUSED_STREAM, HTTP_1_1_REQUIRED, or no
        /// stream could be opened): any request may be sent again. False: the connection ended
        /// before any of the response came, and the server may have acted on it (idempotent
        /// requests only, as for a kept-alive HTTP/1.1 connection).
        let certain: Bool
        /// The server wants HTTP/1.1 for this request (HTTP_1_1_REQUIRED).
        let requiresHTTP1: Bool

        init(_ underlying: SesameError, certain: Bool, requiresHTTP1: Bool = false) {
            self.underlying = underlying
            self.certain = certain
            self.requiresHTTP1 = requiresHTTP1
        }
    }

    /// Sends `request` on a new stream of `connection` (a slot reserved for it) and reads up to
    /// the final response head. `target`: the URL's origin-form request target (`:path`).
    static func send(
        _ request: HTTPRequest,
        target: String,
        on connection: HTTP2Connection,
        settings: HTTP1Exchange.Settings,
        deadline: ContinuousClock.Instant,
        progress: HTTP1Exchange.BodyProgress? = nil
    ) async throws -> HTTP2ResponseReader {
        let origin = connection.origin
        let headers = HTTP1Exchange.headers(for: request, origin: origin, settings: settings)
        let id: Int32
        do {
            id = try await connection.openStream(
                method: request.method,
                scheme: origin.scheme,
                authority: headers.first("Host") ?? origin.hostHeader,
                path: target,
                fields: headers,
                hasBody: request.body != nil
            )
        } catch {
            connection.cancelReservation()
            throw error
        }
        if let observer = settings.onWireEvent {
            observer(.streamOpened(origin: origin.description, Int(id)))
            let lines =
                ["\(request.method) \(target) HTTP/2"]
                + headers.filter {
                    !HTTP2Session.connectionSpecific.contains($0.name.lowercased())
                        || $0.name.caseInsensitiveEquals("Host")
                }
                .map { "\($0.name): \($0.value)" }
            observer(.requestHeadSent(lines.joined(separator: "\r\n")))
        }
        let timeout = request.timeout ?? settings.requestTimeout
        let reader = HTTP2ResponseReader(
            connection,
            stream: id,
            request: request,
            settings: settings,
            timeout: timeout,
            deadline: deadline
        )
        do {
            // Expect: 100-continue: the HEADERS go out at the end of the loop's turn, and the
            // body waits for the answer.
            let expectsContinue = HTTP1Exchange.expectsContinue(request, headers: headers)
            let sendsBody =
                expectsContinue ? try await reader.awaitContinue(within: settings.expectContinueTimeout) : true
            if sendsBody, let body = request.body {
                let body = BodyPieces(body)
                while let (piece, last) = try await body.next() {
                    let limit = min(timeout, max(.milliseconds(1), connection.loop.now.duration(to: deadline)))
                    guard try await connection.sendBody(piece, on: id, end: last, timeout: limit) else { break }
                    if !piece.isEmpty { await progress?(piece.count) }
                    if last { break }
                }
            }
            try await reader.readHead()
            return reader
        } catch {
            reader.abandon()
            throw error
        }
    }
}

/// A request body as pieces of at most 64 KiB (an in-memory body goes as one), each with
/// whether it is the last; an empty last piece ends a body whose end only shows at its end.
/// A file it opened is closed when it is done with or dropped.
final class BodyPieces {
    private var parts: [HTTPBody]
    private var file: (descriptor: Int32, path: String, left: Int)?
    private var stream: AsyncThrowingStream<[UInt8], any Error>.AsyncIterator?
    private var streamDeclared: Int?
    private var streamSent = 0
    private var done = false

    init(_ body: HTTPBody) {
        if case .segments(let segments) = body {
            parts = segments.map { segment in
                switch segment {
                case .data(let data): return .data(data)
                case .file(let url): return .file(url)
                }
            }
        } else {
            parts = [body]
        }
        parts.reverse()
    }

    deinit {
        if let file { close(file.descriptor) }
    }

    func next() async throws -> (piece: [UInt8], last: Bool)? {
        guard !done else { return nil }
        while true {
            if let piece = try await nextFromCurrent() { return (piece, false) }
            guard let part = parts.popLast() else {
                done = true
                return ([], true)
            }
            switch part {
            case .data(let data):
                if parts.isEmpty {
                    done = true
                    return ([UInt8](data), true)
                }
                if !data.isEmpty { return ([UInt8](data), false) }
            case .file(let url):
                let descriptor = open(url.path, O_RDONLY | O_CLOEXEC)
                guard descriptor >= 0 else { throw SesameError(.fileUnreadable, "'\(url.path)': \(errnoText())") }
                file = (descriptor, url.path, part.knownLength ?? 0)
            case .stream(let length, let chunks):
                stream = chunks.makeAsyncIterator()
                streamDeclared = length
                streamSent = 0
            case .segments:
                break  // flattened in init
            }
        }
    }

    private func nextFromCurrent() async throws -> [UInt8]? {
        if let (descriptor, path, left) = file {
            var chunk = [UInt8](repeating: 0, count: 65_536)
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { return try await nextFromCurrent() }
                close(descriptor)
                file = nil
                throw SesameError(.fileUnreadable, "'\(path)': \(errnoText())")
            }
            guard count > 0 else {
                close(descriptor)
                file = nil
                guard left == 0 else { throw SesameError(.fileUnreadable, "'\(path)' shrank while it was being sent") }
                return nil
            }
            guard count <= left else {
                close(descriptor)
                file = nil
                throw SesameError(.fileUnreadable, "'\(path)' grew while it was being sent")
            }
            file = (descriptor, path, left - count)
            return count == chunk.count ? chunk : Array(chunk[0..<count])
        }
        if stream != nil {
            while let chunk = try await stream?.next() {
                guard !chunk.isEmpty else { continue }
                streamSent += chunk.count
                if let declared = streamDeclared, streamSent > declared {
                    throw SesameError(
                        .invalidArgument,
                        "the body stream produced more than its declared \(declared) bytes"
                    )
                }
                return chunk
            }
            stream = nil
            if let declared = streamDeclared, streamSent != declared {
                throw SesameError(
                    .invalidArgument,
                    "the body stream produced \(streamSent) of its declared \(declared) bytes"
                )
            }
        }
        return nil
    }
}
