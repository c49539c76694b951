import FoundationEssentials
import Glibc

/// One HTTP/1.1 request and the head of its response, on a leased connection.
enum HTTP1Exchange {
    /// A reused keep-alive connection turned out to be closed before any response byte arrived:
    /// the request may be sent again on a new connection when it is idempotent.
    struct StaleConnection: Error {
        let underlying: SesameError
    }

    /// Sends `request` and reads up to the final response head. `target`: the URL's origin-form
    /// request target; `progress`: told of the body bytes as they are written.
    static func send(
        _ request: HTTPRequest,
        target: String,
        on lease: ConnectionPool.Lease,
        pool: ConnectionPool,
        settings: ExchangeSettings,
        deadline: ContinuousClock.Instant,
        progress: BodyProgress? = nil
    ) async throws -> ResponseBodyReader {
        let connection = lease.connection
        let headers = RequestHead.headers(for: request, origin: lease.origin, settings: settings)
        let head = try HTTP1RequestEncoder.head(
            method: request.method,
            target: RequestHead.requestTarget(of: request.url, route: lease.origin.route, originForm: target),
            headers: headers
        )
        settings.onWireEvent?(.requestHeadSent(String(decoding: head.dropLast(4), as: UTF8.self)))
        let timeout = request.timeout ?? settings.requestTimeout
        let reader = ResponseBodyReader(
            lease: lease,
            pool: pool,
            request: request,
            settings: settings,
            timeout: timeout,
            deadline: deadline,
            requestAsksToClose: headers.containsToken("close", in: "Connection")
        )
        do {
            let expectsContinue = RequestHead.expectsContinue(request, headers: headers)
            if !request.hasBody {
                try await reader.readHead(sending: head)
                return reader
            }
            if case .data(let data)? = request.body, data.count <= 65_536, !expectsContinue {
                try await reader.readHead(sending: head + data)
                // Written with the head in one go; reported once the answer shows it arrived.
                await progress?(data.count)
                return reader
            } else {
                try await connection.write(head)
                if let body = request.body {
                    let sendBody =
                        expectsContinue ? try await reader.awaitContinue(within: settings.expectContinueTimeout) : true
                    if !sendBody {
                        // The server answered before the body; it may still be waiting for it.
                        reader.forbidReuse()
                    } else {
                        try await send(
                            body,
                            chunked: headers.first("Transfer-Encoding") != nil,
                            on: connection,
                            progress: progress
                        )
                    }
                }
            }
            try await reader.readHead()
            return reader
        } catch let error as SesameError {
            reader.abandon()
            if lease.isReused && !reader.receivedAnyByte
                && [.connectionClosed, .connectionReset, .ioError].contains(error.code)
            {
                throw StaleConnection(underlying: error)
            }
            throw error
        } catch {
            reader.abandon()
            throw error
        }
    }

    /// Writes the body, in chunks when `chunked`. A file goes in reads of a megabyte: one copy
    /// from the page cache, and few trips to the loop.
    private static func send(
        _ body: HTTPBody,
        chunked: Bool,
        on connection: Connection,
        progress: BodyProgress?
    ) async throws {
        let pieces = BodyPieces(body, readSize: 1 << 20)
        while let (piece, last) = try await pieces.next() {
            if !piece.isEmpty {
                try await connection.write(chunked ? HTTP1RequestEncoder.chunk(piece) : piece)
                await progress?(piece.count)
            }
            if last { break }
        }
        if chunked { try await connection.write(HTTP1RequestEncoder.lastChunk) }
    }
}
