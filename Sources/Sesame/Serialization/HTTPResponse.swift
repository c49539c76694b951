import Foundation

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
    /// The URL this response answers (the last one, after redirects).
    public var url: URL { urlBox.value }
    private let urlBox: LayoutBox<URL>  // see `LayoutBox`

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
