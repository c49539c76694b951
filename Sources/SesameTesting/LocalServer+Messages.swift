import FoundationEssentials
import Sesame

extension LocalServer {
    /// A request as the server saw it.
    public struct Request: Sendable {
        /// The request line and header lines, without the final empty line.
        public let head: String
        /// The body, de-chunked.
        public let body: [UInt8]
        /// The verified client certificate's subject, if one was sent.
        public let clientCertificateSubject: String?
        /// Which accepted connection carried it (0 is the first).
        public let connectionIndex: Int
        /// Its position among the requests on that connection (0 is the first).
        public let number: Int

        /// "GET", "POST", ...
        public var method: String { String(head.prefix { $0 != " " }) }

        /// The request target, e.g. "/path?query" or an absolute URL.
        public var target: String {
            let parts = head.prefix { $0 != "\r" && $0 != "\n" }.split(separator: " ")
            return parts.count >= 2 ? String(parts[1]) : ""
        }

        /// The header fields.
        public var headers: HTTPHeaders {
            var headers = HTTPHeaders()
            for line in head.split(separator: "\r\n").dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers.add(
                    name: String(line[..<colon]),
                    value: line[line.index(after: colon)...].trimmingWhitespace()
                )
            }
            return headers
        }
    }

    /// What the server does with a request.
    public struct Response: Sendable {
        enum Kind: Sendable {
            case bytes([UInt8], thenClose: Bool)
            case stall
            case close
            case tunnel(port: Int)
        }

        let kind: Kind
        /// Waits this long before answering.
        public var delay: Duration?

        /// A complete response with a Content-Length body.
        public static func text(
            _ body: String,
            status: Int = 200,
            headers: [(String, String)] = [("Content-Type", "text/plain; charset=utf-8")]
        ) -> Response {
            bytes(Array(body.utf8), status: status, headers: headers)
        }

        /// A complete response with a Content-Length body.
        public static func bytes(_ body: [UInt8], status: Int = 200, headers: [(String, String)] = []) -> Response {
            var head = "HTTP/1.1 \(status) \(reason(status))\r\n"
            for (name, value) in headers { head += "\(name): \(value)\r\n" }
            head += "Content-Length: \(body.count)\r\n\r\n"
            return Response(kind: .bytes(Array(head.utf8) + body, thenClose: false))
        }

        /// A chunked response, one chunk per element, with optional trailers.
        public static func chunked(
            _ chunks: [[UInt8]],
            status: Int = 200,
            headers: [(String, String)] = [],
            trailers: [(String, String)] = []
        ) -> Response {
            var text = "HTTP/1.1 \(status) \(reason(status))\r\n"
            for (name, value) in headers { text += "\(name): \(value)\r\n" }
            text += "Transfer-Encoding: chunked\r\n\r\n"
            var bytes = Array(text.utf8)
            for chunk in chunks where !chunk.isEmpty {
                bytes += Array("\(String(chunk.count, radix: 16))\r\n".utf8) + chunk + Array("\r\n".utf8)
            }
            bytes += Array("0\r\n".utf8)
            for (name, value) in trailers { bytes += Array("\(name): \(value)\r\n".utf8) }
            bytes += Array("\r\n".utf8)
            return Response(kind: .bytes(bytes, thenClose: false))
        }

        /// The body of a complete response (after the head), as UTF-8 text; "" for other kinds.
        public var bodyText: String {
            guard case .bytes(let bytes, _) = kind, let end = Self.headEnd(bytes) else { return "" }
            return String(decoding: bytes[end...], as: UTF8.self)
        }

        /// The same response with one more header field in its head.
        public func adding(header: (String, String)) -> Response {
            guard case .bytes(let bytes, let thenClose) = kind, let end = Self.headEnd(bytes) else { return self }
            let field = Array("\(header.0): \(header.1)\r\n".utf8)
            var copy = Response(
                kind: .bytes(Array(bytes[..<(end - 2)]) + field + Array(bytes[(end - 2)...]), thenClose: thenClose)
            )
            copy.delay = delay
            return copy
        }

        /// The index just after the head's final CRLF CRLF.
        private static func headEnd(_ bytes: [UInt8]) -> Int? {
            guard bytes.count >= 4 else { return nil }
            for index in 0...(bytes.count - 4)
            where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
                return index + 4
            }
            return nil
        }

        /// A redirect to `location`.
        public static func redirect(_ status: Int, to location: String) -> Response {
            text("", status: status, headers: [("Location", location)])
        }

        /// Exactly these bytes; then the connection is closed when `thenClose`.
        public static func raw(_ bytes: [UInt8], thenClose: Bool = false) -> Response {
            Response(kind: .bytes(bytes, thenClose: thenClose))
        }

        /// Exactly this text; then the connection is closed when `thenClose`.
        public static func raw(_ text: String, thenClose: Bool = false) -> Response {
            raw(Array(text.utf8), thenClose: thenClose)
        }

        /// Answers a `CONNECT` with 200 and then relays the connection's bytes to and from
        /// `127.0.0.1:port` (a tunnelling proxy), until either side closes.
        public static func tunnel(toPort port: Int) -> Response { Response(kind: .tunnel(port: port)) }

        /// Sends nothing and keeps the connection open (a stalled server).
        public static let stall = Response(kind: .stall)

        /// Closes the connection without answering.
        public static let closeConnection = Response(kind: .close)

        /// The same response after `delay`.
        public func delayed(by delay: Duration) -> Response {
            var copy = self
            copy.delay = delay
            return copy
        }

        static func reason(_ status: Int) -> String {
            switch status {
            case 200: return "OK"
            case 201: return "Created"
            case 204: return "No Content"
            case 301: return "Moved Permanently"
            case 302: return "Found"
            case 303: return "See Other"
            case 304: return "Not Modified"
            case 307: return "Temporary Redirect"
            case 308: return "Permanent Redirect"
            case 400: return "Bad Request"
            case 401: return "Unauthorized"
            case 403: return "Forbidden"
            case 404: return "Not Found"
            case 407: return "Proxy Authentication Required"
            case 500: return "Internal Server Error"
            default: return "Status"
            }
        }
    }
}
