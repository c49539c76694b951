import FoundationEssentials
import Glibc

/// An HTTP request: method, URL, header fields and an optional body.
public struct HTTPRequest: Sendable {
    /// The method, e.g. "GET"; sent as given (methods are case-sensitive).
    public var method: String
    /// The absolute `http` or `https` URL.
    public var url: URL {
        get { urlBox.value }
        set { urlBox = LayoutBox(newValue) }
    }
    /// Header fields to send in addition to those the session adds (Host, Content-Length, ...).
    public var headers: HTTPHeaders
    /// The body, if any.
    public var body: HTTPBody? {
        get { bodyBox?.value }
        set { bodyBox = newValue.map(LayoutBox.init) }
    }
    /// Idle time allowed between bytes of this request's response; overrides the configuration.
    public var timeout: Duration?
    /// Whether the session's cookies go with this request and its response's cookies are kept
    /// (`httpShouldHandleCookies`). A `Cookie` header set here is sent as it is, without stored cookies.
    public var handlesCookies = true

    // Boxed: see `LayoutBox`.
    private var urlBox: LayoutBox<URL>
    private var bodyBox: LayoutBox<HTTPBody>?

    /// A request for `url` with `method`, `headers` and `body`, as given.
    public init(url: URL, method: String = "GET", headers: HTTPHeaders = HTTPHeaders(), body: HTTPBody? = nil) {
        self.urlBox = LayoutBox(url)
        self.method = method
        self.headers = headers
        self.bodyBox = body.map(LayoutBox.init)
    }

    /// Whether there is a body, without copying it out.
    var hasBody: Bool { bodyBox != nil }

    /// True for methods that RFC 9110 defines as idempotent (safe to send again on a new
    /// connection when a reused one turned out to be closed).
    public var isIdempotent: Bool { ["GET", "HEAD", "OPTIONS", "TRACE", "PUT", "DELETE"].contains(method) }
}

/// A request body.
public enum HTTPBody: Sendable {
    /// Bytes in memory.
    case data(Data)
    /// A file, streamed from disk.
    case file(URL)
    /// Bytes produced asynchronously; sent chunked unless `length` is known. Such a body cannot be
    /// sent twice (so it is not replayed for redirects or retries).
    case stream(length: Int?, AsyncThrowingStream<[UInt8], any Error>)
    /// Pieces in memory and files, sent one after the other (a multipart form): the length is
    /// known, files are read from disk as they are sent, and the body can be sent again.
    case segments([HTTPBody.Segment])

    /// One piece of a ``segments(_:)`` body.
    public enum Segment: Sendable {
        /// Bytes held in memory.
        case data(Data)
        /// The contents of a file, read while the request is sent.
        case file(URL)
    }

    /// Wraps any asynchronous sequence of byte chunks.
    public static func stream<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks, length: Int? = nil) -> HTTPBody
    where Chunks.Element == [UInt8] {
        let stream = AsyncThrowingStream<[UInt8], any Error> { continuation in
            let task = Task {
                do {
                    for try await chunk in chunks { continuation.yield(chunk) }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
        return .stream(length: length, stream)
    }

    /// The length when it is known without reading the body.
    var knownLength: Int? {
        switch self {
        case .data(let data): return data.count
        case .file(let url):
            var status = stat()
            guard stat(url.path, &status) == 0, status.st_mode & S_IFMT == S_IFREG else { return nil }
            return Int(status.st_size)
        case .stream(let length, _): return length
        case .segments(let segments):
            var total = 0
            for segment in segments {
                switch segment {
                case .data(let data): total += data.count
                case .file(let url):
                    guard let length = HTTPBody.file(url).knownLength else { return nil }
                    total += length
                }
            }
            return total
        }
    }

    /// Whether the body can be sent again (for a redirect or a retry).
    var isReplayable: Bool {
        if case .stream = self { return false }
        return true
    }
}
