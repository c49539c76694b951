import FoundationEssentials
import Glibc

/// A `multipart/form-data` body (RFC 7578) of fields and files, as AFNetworking's
/// `AFMultipartFormData` builds it. Files are read from disk while the body is sent, so a 1 GiB
/// file never sits in memory; the body's length is known up front and it can be sent again.
///
/// ```swift
/// var form = MultipartFormData()
/// form.append("Ada", name: "user")
/// try form.appendFile(at: URL(fileURLWithPath: "photo.jpg"), name: "photo")
/// var request = HTTPRequest(url: url, method: "POST")
/// form.apply(to: &request)
/// ```
public struct MultipartFormData: Sendable {
    /// The boundary between parts (random unless given).
    public let boundary: String
    private var segments: [HTTPBody.Segment] = []
    private var isEmpty = true

    /// A form separated by `boundary`, or by a random boundary when it is nil.
    public init(boundary: String? = nil) {
        self.boundary =
            boundary ?? "Boundary+"
            + (0..<2).map { _ in HexDigits.upper(UInt32.random(in: 0...UInt32.max)) }.joined()
    }

    /// The `Content-Type` of the body.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// A text field, written in UTF-8 (RFC 7578 section 5.1).
    public mutating func append(_ value: String, name: String) {
        append(Data(value.utf8), name: name, fileName: nil, mimeType: nil)
    }

    /// Bytes as a part; with `fileName` it is a file upload.
    public mutating func append(_ data: Data, name: String, fileName: String?, mimeType: String?) {
        appendHeaders(name: name, fileName: fileName, mimeType: mimeType)
        segments.append(.data(data))
    }

    /// A file from disk, streamed while the body is sent. The file name defaults to the URL's last
    /// component, the type to one guessed from its extension.
    /// - Throws: ``SesameError/Code/fileUnreadable`` when it is not a readable regular file.
    public mutating func appendFile(
        at url: URL,
        name: String,
        fileName: String? = nil,
        mimeType: String? = nil
    )
        throws
    {
        var status = stat()
        guard stat(url.path, &status) == 0 else {
            throw SesameError(.fileUnreadable, "'\(url.path)': \(errnoText())")
        }
        guard status.st_mode & S_IFMT == S_IFREG else {
            throw SesameError(.fileUnreadable, "'\(url.path)' is not a regular file")
        }
        guard access(url.path, R_OK) == 0 else {
            throw SesameError(.fileUnreadable, "'\(url.path)' is not readable: \(errnoText())")
        }
        let fileName = fileName ?? url.lastPathComponent
        appendHeaders(
            name: name,
            fileName: fileName,
            mimeType: mimeType ?? Self.mimeType(forExtension: url.pathExtension)
        )
        segments.append(.file(url))
    }

    /// A part with the header fields given (`appendPartWithHeaders:body:`), in their order.
    /// - Throws: ``SesameError/Code/invalidArgument`` for a field name that is not an HTTP token, or
    ///   a name or value holding CR, LF or NUL (they would end the part's header early).
    public mutating func append(_ data: Data, headers: [(name: String, value: String)]) throws {
        for (name, value) in headers {
            guard !name.isEmpty, name.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: ":") }) else {
                throw SesameError(.invalidArgument, "'\(name)' is not a header field name for a multipart part")
            }
            guard !value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw SesameError(.invalidArgument, "the part's '\(name)' value holds a line break or NUL")
            }
        }
        var head = isEmpty ? "--\(boundary)\r\n" : "\r\n--\(boundary)\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        head += "\r\n"
        segments.append(.data(Data(head.utf8)))
        segments.append(.data(data))
        isEmpty = false
    }

    /// The body, closing boundary included.
    public var body: HTTPBody {
        let closing = (isEmpty ? "--\(boundary)--\r\n" : "\r\n--\(boundary)--\r\n")
        return .segments(segments + [.data(Data(closing.utf8))])
    }

    /// Puts the body and its `Content-Type` on `request`.
    public func apply(to request: inout HTTPRequest) {
        request.headers.replaceOrAdd(name: "Content-Type", value: contentType)
        request.body = body
    }

    private mutating func appendHeaders(name: String, fileName: String?, mimeType: String?) {
        var head = isEmpty ? "--\(boundary)\r\n" : "\r\n--\(boundary)\r\n"
        head += "Content-Disposition: form-data; name=\"\(Self.quoted(name))\""
        if let fileName { head += "; filename=\"\(Self.quoted(fileName))\"" }
        head += "\r\n"
        if let type = mimeType ?? (fileName != nil ? "application/octet-stream" : nil) {
            head += "Content-Type: \(type)\r\n"
        }
        head += "\r\n"
        segments.append(.data(Data(head.utf8)))
        isEmpty = false
    }

    /// A name inside quotes as browsers write it (RFC 7578 section 4.2, WHATWG): `"`, CR and LF
    /// percent-encoded, everything else as UTF-8.
    static func quoted(_ text: String) -> String {
        var quoted = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": quoted += "%22"
            case "\r": quoted += "%0D"
            case "\n": quoted += "%0A"
            default: quoted.unicodeScalars.append(scalar)
            }
        }
        return quoted
    }

    static func mimeType(forExtension pathExtension: String) -> String {
        switch pathExtension.lowercased() {
        case "txt", "text": "text/plain"
        case "html", "htm": "text/html"
        case "css": "text/css"
        case "csv": "text/csv"
        case "json": "application/json"
        case "xml": "application/xml"
        case "pdf": "application/pdf"
        case "zip": "application/zip"
        case "gz": "application/gzip"
        case "png": "image/png"
        case "jpg", "jpeg": "image/jpeg"
        case "gif": "image/gif"
        case "webp": "image/webp"
        case "svg": "image/svg+xml"
        case "mp4": "video/mp4"
        case "mp3": "audio/mpeg"
        default: "application/octet-stream"
        }
    }
}

extension HTTPRequestSerializer {
    /// A multipart request (`multipartFormRequestWithMethod:URLString:parameters:constructingBodyWithBlock:`):
    /// `parameters` become text fields (nested names as in a query), then `construct` adds parts.
    public func multipartRequest(
        method: String = "POST",
        url: URL,
        parameters: [String: Parameter]? = nil,
        constructingBody construct: (inout MultipartFormData) throws -> Void = { _ in }
    ) throws -> HTTPRequest {
        var request = try baseRequest(method: method, url: url)
        var form = MultipartFormData()
        if let parameters {
            // Field names and values as the form query would have them, unescaped.
            let query = try FormURLEncoding.query(parameters, encoding: .utf8)
            for pair in query.split(separator: "&") where !pair.isEmpty {
                let parts = pair.split(separator: "=", maxSplits: 1).map {
                    String($0).percentDecoded() ?? String($0)
                }
                form.append(parts.count > 1 ? parts[1] : "", name: parts[0])
            }
        }
        try construct(&form)
        form.apply(to: &request)
        return request
    }
}
