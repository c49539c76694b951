import Foundation
import Sesame

// `URLRequest` is FoundationNetworking's; here is how Sesame sends one and shows a redirect.

extension URLRequest {
    /// The Sesame request this one sends, or the URL error a URLSession reports for it.
    func sesameRequest() throws -> HTTPRequest {
        guard let url, let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            url.host != nil
        else { throw URLError(.unsupportedURL, userInfo: Self.errorInfo(.unsupportedURL, url)) }
        // A port no socket can have makes the URL a bad one (Foundation's -1000), not a failed connection.
        if let port = url.port, !(0...65535).contains(port) {
            throw URLError(.badURL, userInfo: Self.errorInfo(.badURL, url))
        }
        var request = HTTPRequest(url: url, method: httpMethod ?? "GET")
        for (name, value) in (allHTTPHeaderFields ?? [:]).sorted(by: { $0.key < $1.key }) {
            request.headers.add(name: name, value: value)
        }
        request.handlesCookies = httpShouldHandleCookies
        // A request given a timeout of its own keeps it; one left at Foundation's default (60 s)
        // takes the configuration's `timeoutIntervalForRequest`.
        if timeoutInterval != Self.defaultTimeoutInterval, timeoutInterval > 0 {
            // Bounded so an enormous (or infinite) interval is a long wait, never a trap.
            let milliseconds = min(timeoutInterval, 1e9) * 1000
            request.timeout = .milliseconds(Int64(milliseconds.rounded(.up)))
        }
        if let httpBody, !httpBody.isEmpty {
            request.body = .data(httpBody)
        } else if let stream = httpBodyStream as? SesameBodyStream {
            request.body = stream.body
        } else if let stream = httpBodyStream {
            request.body = InputStreamBox(stream).body()
        }
        return request
    }

    private static func errorInfo(_ code: URLError.Code, _ url: URL?) -> [String: Any] {
        var info: [String: Any] = [NSURLErrorFailingURLErrorKey: url as Any]
        info[NSLocalizedDescriptionKey] = URLError.foundationDescription(code, host: url?.host)
        info["NSErrorFailingURLStringKey"] = url?.absoluteString
        return info
    }

    /// `URLRequest(url:)`'s timeout.
    static let defaultTimeoutInterval: TimeInterval = 60

    /// The request as a redirect or a delegate sees it.
    init(_ request: HTTPRequest, timeoutInterval: TimeInterval = 60) {
        self.init(url: request.url, timeoutInterval: timeoutInterval)
        httpMethod = request.method
        for field in request.headers { addValue(field.value, forHTTPHeaderField: field.name) }
        httpShouldHandleCookies = request.handlesCookies
        if case .data(let data) = request.body { httpBody = data }
    }

    /// A body Sesame sends as it is (a multipart form of pieces and files, streamed from disk and
    /// sent again when a challenge asks), carried as the request's `httpBodyStream`; set by
    /// Sesame's compatibility modules, replaced by setting `httpBody` or `httpBodyStream`.
    package var sesameBody: HTTPBody? {
        get { (httpBodyStream as? SesameBodyStream)?.body }
        set { httpBodyStream = newValue.map(SesameBodyStream.init) }
    }
}

/// A Sesame body as an `InputStream`, so a `URLRequest` can carry it: Sesame sends the body
/// itself (again for a challenge); anything else reading the stream reads nothing.
final class SesameBodyStream: InputStream {
    let body: HTTPBody

    init(_ body: HTTPBody) {
        self.body = body
        super.init(data: Data())
    }
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
