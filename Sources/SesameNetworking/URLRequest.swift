import Foundation
import Sesame

/// A URL load request (`URLRequest`), as Apple's: a value with the URL, method, headers, body
/// and the options Sesame honours.
public struct URLRequest: Hashable, Sendable, CustomStringConvertible {
    /// How the request treats cached responses. Sesame keeps no response cache: every policy
    /// loads from the origin (`reloadIgnoringLocalCacheData`'s behaviour).
    public enum CachePolicy: UInt, Sendable {
        case useProtocolCachePolicy = 0
        case reloadIgnoringLocalCacheData = 1
        case reloadIgnoringLocalAndRemoteCacheData = 4
        case returnCacheDataElseLoad = 2
        case returnCacheDataDontLoad = 3
        case reloadRevalidatingCacheData = 5

        public static var reloadIgnoringCacheData: CachePolicy { .reloadIgnoringLocalCacheData }
    }

    public var url: URL?
    public var cachePolicy: CachePolicy
    /// Seconds without progress before the request fails with `URLError.timedOut`.
    public var timeoutInterval: TimeInterval
    public var mainDocumentURL: URL?
    /// Whether cookies are sent and stored for this request (with the configuration's).
    public var httpShouldHandleCookies = true
    public var httpShouldUsePipelining = false
    public var allowsCellularAccess = true
    public var allowsExpensiveNetworkAccess = true
    public var allowsConstrainedNetworkAccess = true
    private var method: String?
    private var fields: [(name: String, value: String)] = []
    /// The body; setting it clears ``httpBodyStream``.
    public var httpBody: Data? {
        didSet {
            if httpBody != nil {
                stream = nil
                sesameBody = nil
            }
        }
    }
    private var stream: InputStreamBox?
    /// A body Sesame sends as it is (a multipart form of pieces and files, streamed from disk and
    /// sent again when a challenge asks); set by Sesame's compatibility modules, cleared by
    /// setting ``httpBody`` or ``httpBodyStream``.
    package var sesameBody: SesameBodyBox? {
        didSet {
            if sesameBody != nil {
                httpBody = nil
                stream = nil
            }
        }
    }

    public init(url: URL, cachePolicy: CachePolicy = .useProtocolCachePolicy, timeoutInterval: TimeInterval = 60) {
        self.url = url
        self.cachePolicy = cachePolicy
        self.timeoutInterval = timeoutInterval
    }

    /// `GET` unless set. Kept as set: unlike Foundation, which upper-cases the standard methods
    /// (`get` becomes `GET`), Sesame sends the spelling given.
    public var httpMethod: String? {
        get { method ?? "GET" }
        set { method = newValue }
    }

    /// The body as a stream, read once when the request is sent (so it cannot be sent again for
    /// a challenge); setting it clears ``httpBody``.
    public var httpBodyStream: InputStream? {
        get { stream?.stream }
        set {
            stream = newValue.map(InputStreamBox.init)
            if newValue != nil {
                httpBody = nil
                sesameBody = nil
            }
        }
    }

    /// The header fields, one value per name (repeated fields joined with commas, as Apple's).
    public var allHTTPHeaderFields: [String: String]? {
        get {
            var result: [String: String] = [:]
            for field in fields {
                if let existing = result.first(where: { $0.key.caseInsensitiveCompare(field.name) == .orderedSame }) {
                    result[existing.key] = existing.value + "," + field.value
                } else {
                    result[field.name] = field.value
                }
            }
            return result
        }
        set {
            fields = (newValue ?? [:]).sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
    }

    /// The field's value (case-insensitive name), repeated fields joined with commas.
    public func value(forHTTPHeaderField field: String) -> String? {
        let values = fields.filter { $0.name.caseInsensitiveCompare(field) == .orderedSame }.map(\.value)
        return values.isEmpty ? nil : values.joined(separator: ",")
    }

    /// Replaces the field (nil removes it).
    public mutating func setValue(_ value: String?, forHTTPHeaderField field: String) {
        fields.removeAll { $0.name.caseInsensitiveCompare(field) == .orderedSame }
        if let value { fields.append((field, value)) }
    }

    /// Adds a value to the field (joined with a comma when it is already there).
    public mutating func addValue(_ value: String, forHTTPHeaderField field: String) {
        if let index = fields.firstIndex(where: { $0.name.caseInsensitiveCompare(field) == .orderedSame }) {
            fields[index].value += "," + value
        } else {
            fields.append((field, value))
        }
    }

    public var description: String { url?.absoluteString ?? "(no URL)" }

    public static func == (lhs: URLRequest, rhs: URLRequest) -> Bool {
        lhs.url == rhs.url && lhs.httpMethod == rhs.httpMethod && lhs.httpBody == rhs.httpBody
            && lhs.allHTTPHeaderFields == rhs.allHTTPHeaderFields && lhs.timeoutInterval == rhs.timeoutInterval
            && lhs.cachePolicy == rhs.cachePolicy && lhs.httpShouldHandleCookies == rhs.httpShouldHandleCookies
            && lhs.stream === rhs.stream && lhs.sesameBody === rhs.sesameBody
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(url)
        hasher.combine(httpMethod)
        hasher.combine(httpBody)
    }

    // MARK: - To and from Sesame

    /// The Sesame request this one sends, or the URL error a URLSession reports for it.
    func sesameRequest() throws -> HTTPRequest {
        guard let url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil
        else { throw URLError(.unsupportedURL, userInfo: [NSURLErrorFailingURLErrorKey: url as Any]) }
        var request = HTTPRequest(url: url, method: httpMethod ?? "GET")
        for field in fields { request.headers.add(name: field.name, value: field.value) }
        request.handlesCookies = httpShouldHandleCookies
        if let httpBody {
            request.body = .data(httpBody)
        } else if let stream {
            request.body = stream.body()
        } else if let sesameBody {
            request.body = sesameBody.body
        }
        return request
    }

    /// The request as a redirect or a delegate sees it.
    init(_ request: HTTPRequest, timeoutInterval: TimeInterval = 60) {
        self.init(url: request.url, timeoutInterval: timeoutInterval)
        method = request.method
        fields = request.headers.map { ($0.name, $0.value) }
        httpShouldHandleCookies = request.handlesCookies
        if case .data(let data) = request.body { httpBody = data }
    }
}

/// A Sesame body carried by a ``URLRequest`` (compared by identity).
package final class SesameBodyBox: Sendable {
    package let body: HTTPBody
    package init(_ body: HTTPBody) { self.body = body }
}

/// An `InputStream` (not Sendable in Foundation), read on one task when the request is sent.
final class InputStreamBox: @unchecked Sendable {
    let stream: InputStream
    init(_ stream: InputStream) { self.stream = stream }

    /// A streamed body that reads the stream in 64 KiB pieces.
    func body() -> HTTPBody {
        let stream = self.stream
        let reader = UncheckedBox(stream)
        return .stream(
            length: nil,
            AsyncThrowingStream { continuation in
                let stream = reader.value
                stream.open()
                defer { stream.close() }
                var buffer = [UInt8](repeating: 0, count: 64 << 10)
                while true {
                    let count = stream.read(&buffer, maxLength: buffer.count)
                    if count < 0 {
                        continuation.finish(throwing: stream.streamError ?? URLError(.cannotOpenFile))
                        return
                    }
                    if count == 0 { break }
                    continuation.yield(Array(buffer[..<count]))
                }
                continuation.finish()
            }
        )
    }
}

/// A value used from one place at a time that the compiler cannot prove Sendable (Foundation's
/// classes, app delegates written in Swift 5 mode).
struct UncheckedBox<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
