/// A parsed HTTP/1.x response head.
struct HTTP1ResponseHead: Hashable, Sendable {
    /// The minor version: 0 for HTTP/1.0, 1 for HTTP/1.1.
    let minorVersion: Int
    let status: Int
    let reason: String
    let headers: HTTPHeaders

    var isInformational: Bool { (100..<200).contains(status) }
}

/// Limits that keep a hostile or broken server from using unbounded memory.
struct HTTP1ParserLimits: Hashable, Sendable {
    /// The longest status line, header line, chunk-size line or trailer line.
    var maximumLineLength = 8_192
    /// The most bytes a head (or the trailers) may take.
    var maximumHeadSize = 65_536
    /// The most header fields in one head (or trailer section).
    var maximumFieldCount = 128
    /// The most 1xx responses before the final one.
    var maximumInformationalResponses = 16
}
