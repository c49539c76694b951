import FoundationEssentials
import Glibc

/// An HTTP response head.
public struct HTTPResponse: Sendable, CustomStringConvertible {
    /// The status code, e.g. 200.
    public let status: Int
    /// The reason phrase as the server sent it (may be empty).
    public let reason: String
    /// "HTTP/1.1" or "HTTP/1.0".
    public let version: String
    /// The header fields as received.
    public let headers: HTTPHeaders
    /// The trailer fields that followed the body: the trailer section of a chunked HTTP/1.1 body,
    /// or the trailing HEADERS frame of an HTTP/2 stream. Kept apart from ``headers``, never
    /// merged into them (RFC 9110 section 6.5.1). Empty until the body has been read to its end:
    /// the response `data(for:)` and `download(for:)` return carries them, and so does
    /// ``SessionTask/response`` once a streamed body ended; the head handed to a delegate or with
    /// `bytes(for:)` comes before them.
    public internal(set) var trailers = HTTPHeaders()
    /// The URL this response answers (the last one, after redirects).
    public var url: URL { urlBox.value }
    private let urlBox: LayoutBox<URL>  // see `LayoutBox`

    /// A response with these fields, as given (for tests and for callers that make responses of
    /// their own).
    public init(status: Int, reason: String, version: String = "HTTP/1.1", headers: HTTPHeaders, url: URL) {
        self.status = status
        self.reason = reason
        self.version = version
        self.headers = headers
        self.urlBox = LayoutBox(url)
    }

    /// The value of a header field (all values joined with ", "), case-insensitively.
    public func value(forHTTPHeaderField name: String) -> String? { headers[name] }

    /// The declared body length, when the server sent a valid Content-Length.
    public var expectedContentLength: Int? { headers.first("Content-Length").flatMap { Int($0) } }

    public var description: String { "\(version) \(status) \(reason)" }
}
