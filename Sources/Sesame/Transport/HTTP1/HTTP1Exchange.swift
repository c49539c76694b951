import FoundationEssentials
import Glibc

/// One HTTP/1.1 request and the head of its response, on a leased connection.
enum HTTP1Exchange {
    /// A reused keep-alive connection turned out to be closed before any response byte arrived:
    /// the request may be sent again on a new connection when it is idempotent.
    struct StaleConnection: Error {
        let underlying: SesameError
    }

    /// The header fields actually sent: Host first, the request's own, then the defaults.
    static func headers(for request: HTTPRequest, origin: Origin, settings: Settings) -> HTTPHeaders {
        var headers = HTTPHeaders()
        headers.reserveCapacity(request.headers.count + settings.addedHeaders.count + 2)
        headers.add(name: "Host", value: request.headers.first("Host") ?? origin.hostHeader)
        for field in request.headers where !field.name.caseInsensitiveEquals("Host") {
            headers.add(name: field.name, value: field.value)
        }
        for field in settings.addedHeaders where !headers.contains(field.name) {
            headers.add(name: field.name, value: field.value)
        }
        if let body = request.body {
            headers.remove(name: "Content-Length")
            headers.remove(name: "Transfer-Encoding")
            if let length = body.knownLength {
                headers.add(name: "Content-Length", value: String(length))
            } else {
                headers.add(name: "Transfer-Encoding", value: "chunked")
            }
        } else if request.method == "POST" || request.method == "PUT" || request.method == "PATCH",
            !headers.contains("Content-Length")
        {
            headers.add(name: "Content-Length", value: "0")
        }
        return headers
    }

    /// Whether `request`, sent with `headers`, waits for `100 Continue` before its body (RFC 9110
    /// section 10.1.1; the expectation is case-insensitive), over either protocol.
    static func expectsContinue(_ request: HTTPRequest, headers: HTTPHeaders) -> Bool {
        request.hasBody && headers.first("Expect")?.caseInsensitiveEquals("100-continue") == true
    }

    /// The origin-form request target: path and query, percent-encoded as in the URL.
    static func target(of url: URL) -> String {
        let absolute = url.baseURL == nil ? url : url.absoluteURL
        var path = absolute.path(percentEncoded: true)
        if path.isEmpty { path = "/" }
        if let query = absolute.query(percentEncoded: true) { path += "?" + query }
        return path
    }

    /// The request target for a route: absolute form to a forwarding proxy (RFC 9112 3.2.2),
    /// origin form (`originForm`, when already known) otherwise.
    static func requestTarget(of url: URL, route: ProxyRoute, originForm: String? = nil) -> String {
        let path = originForm ?? target(of: url)
        guard case .forward = route, let origin = Origin(url) else { return path }
        return "\(origin.scheme)://\(origin.hostHeader)\(path)"
    }

    /// Told how many body bytes were just handed to the connection (upload progress).
    typealias BodyProgress = @Sendable (Int) async -> Void

    /// Sends `request` and reads up to the final response head. `target`: the URL's origin-form
    /// request target; `progress`: told of the body bytes as they are written.
    static func send(
        _ request: HTTPRequest,
        target: String,
        on lease: ConnectionPool.Lease,
        pool: ConnectionPool,
        settings: Settings,
        deadline: ContinuousClock.Instant,
        progress: BodyProgress? = nil
    ) async throws -> ResponseBodyReader {
        let connection = lease.connection
        let headers = headers(for: request, origin: lease.origin, settings: settings)
        let head = try HTTP1RequestEncoder.head(
            method: request.method,
            target: requestTarget(of: request.url, route: lease.origin.route, originForm: target),
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
            let expectsContinue = expectsContinue(request, headers: headers)
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

    private static func send(
        _ body: HTTPBody,
        chunked: Bool,
        on connection: Connection,
        progress: BodyProgress?
    ) async throws {
        switch body {
        case .data(let data):
            try await connection.write([UInt8](data))
            await progress?(data.count)
        case .segments(let segments):
            for segment in segments {
                switch segment {
                case .data(let data):
                    try await send(.data(data), chunked: false, on: connection, progress: progress)
                case .file(let url):
                    try await send(.file(url), chunked: false, on: connection, progress: progress)
                }
            }
        case .file(let url):
            let fd = open(url.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw SesameError(.fileUnreadable, "'\(url.path)': \(errnoText())") }
            defer { close(fd) }
            let expected = body.knownLength ?? 0
            var sent = 0
            // Large reads straight into an array: one copy from the page cache, few loop hops.
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count < 0 {
                    if errno == EINTR { continue }
                    throw SesameError(.fileUnreadable, "'\(url.path)': \(errnoText())")
                }
                if count == 0 { break }
                sent += count
                guard sent <= expected else {
                    throw SesameError(.fileUnreadable, "'\(url.path)' grew while it was being sent")
                }
                try await connection.write(count == chunk.count ? chunk : Array(chunk[0..<count]))
                await progress?(count)
            }
            guard sent == expected else {
                throw SesameError(.fileUnreadable, "'\(url.path)' shrank while it was being sent")
            }
        case .stream(let length, let chunks):
            var sent = 0
            for try await chunk in chunks where !chunk.isEmpty {
                sent += chunk.count
                if chunked {
                    try await connection.write(HTTP1RequestEncoder.chunk(chunk))
                } else {
                    guard let length, sent <= length else {
                        throw SesameError(
                            .invalidArgument,
                            "the body stream produced more than its declared \(length ?? 0) bytes"
                        )
                    }
                    try await connection.write(chunk)
                }
                await progress?(chunk.count)
            }
            if chunked {
                try await connection.write(HTTP1RequestEncoder.lastChunk)
            } else if let length, sent != length {
                throw SesameError(.invalidArgument, "the body stream produced \(sent) of its declared \(length) bytes")
            }
        }
    }
}
