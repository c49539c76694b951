import Foundation
import Sesame

/// The metadata of a response (`URLResponse`).
open class URLResponse: NSObject, @unchecked Sendable {
    // @unchecked: immutable after init.
    /// The URL of the response (after redirects).
    public let url: URL?
    /// The MIME type from `Content-Type`, lowercased, without parameters.
    public let mimeType: String?
    /// The length the response announced (`Content-Length`), or -1 when unknown.
    public let expectedContentLength: Int64
    /// The `charset` parameter of `Content-Type`, as given.
    public let textEncodingName: String?

    public init(url: URL, mimeType: String?, expectedContentLength length: Int, textEncodingName name: String?) {
        self.url = url
        self.mimeType = mimeType
        expectedContentLength = Int64(length)
        textEncodingName = name
    }

    /// The URL's last path component ("Unknown" when there is none). Unlike Foundation, the
    /// `Content-Disposition` field is not read yet.
    open var suggestedFilename: String? {
        let last = url?.lastPathComponent ?? ""
        return last.isEmpty || last == "/" ? "Unknown" : last
    }
}

/// The metadata of an HTTP response (`HTTPURLResponse`).
open class HTTPURLResponse: URLResponse, @unchecked Sendable {
    /// The status code (200, 401, ...).
    public let statusCode: Int
    /// The header fields, one value per name (repeated fields joined with commas, as Apple's).
    public let allHeaderFields: [AnyHashable: Any]
    private let headers: HTTPHeaders

    public init?(url: URL, statusCode: Int, httpVersion: String?, headerFields: [String: String]?) {
        self.statusCode = statusCode
        var headers = HTTPHeaders()
        for (name, value) in headerFields ?? [:] { headers.add(name: name, value: value) }
        self.headers = headers
        allHeaderFields = Self.joined(headers)
        let (mime, charset) = Self.contentType(headers)
        super.init(
            url: url,
            mimeType: mime,
            expectedContentLength: headers.first("Content-Length").flatMap { Int($0) } ?? -1,
            textEncodingName: charset
        )
    }

    /// The response Sesame received.
    init(_ response: HTTPResponse) {
        statusCode = response.status
        headers = response.headers
        allHeaderFields = Self.joined(response.headers)
        let (mime, charset) = Self.contentType(response.headers)
        super.init(
            url: response.url,
            mimeType: mime,
            expectedContentLength: response.expectedContentLength ?? -1,
            textEncodingName: charset
        )
    }

    /// The field's value (case-insensitive name).
    open func value(forHTTPHeaderField field: String) -> String? {
        let values = headers.values(for: field)
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }

    /// Apple's phrase for a status code.
    open class func localizedString(forStatusCode statusCode: Int) -> String {
        switch statusCode {
        case 200: "no error"
        case 201: "created"
        case 204: "no content"
        case 301: "moved permanently"
        case 302: "found"
        case 304: "not modified"
        case 400: "bad request"
        case 401: "unauthorized"
        case 403: "forbidden"
        case 404: "not found"
        case 407: "needs proxy authentication"
        case 500: "internal server error"
        case 502: "bad gateway"
        case 503: "service unavailable"
        default:
            statusCode < 300
                ? "success" : statusCode < 400 ? "redirected" : statusCode < 500 ? "client error" : "server error"
        }
    }

    private static func joined(_ headers: HTTPHeaders) -> [AnyHashable: Any] {
        var result: [String: String] = [:]
        var names: [String: String] = [:]
        for field in headers {
            let key = field.name.lowercased()
            if let name = names[key], let existing = result[name] {
                result[name] = existing + ", " + field.value
            } else {
                names[key] = field.name
                result[field.name] = field.value
            }
        }
        return result
    }

    private static func contentType(_ headers: HTTPHeaders) -> (String?, String?) {
        guard let value = headers.first("Content-Type") else { return (nil, nil) }
        let parts = value.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        let mime = parts.first.map { $0.lowercased() }
        let charset = parts.dropFirst().first { $0.lowercased().hasPrefix("charset=") }
            .map { String($0.dropFirst(8)).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) }
        return (mime, charset)
    }
}
