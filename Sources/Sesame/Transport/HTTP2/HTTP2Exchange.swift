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
        settings: ExchangeSettings,
        deadline: ContinuousClock.Instant,
        progress: BodyProgress? = nil
    ) async throws -> HTTP2ResponseReader {
        let origin = connection.origin
        let headers = RequestHead.headers(for: request, origin: origin, settings: settings)
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
            let expectsContinue = RequestHead.expectsContinue(request, headers: headers)
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
