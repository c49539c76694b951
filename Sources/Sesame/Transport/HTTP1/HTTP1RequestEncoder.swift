/// Writes HTTP/1.1 request heads and chunked framing, refusing anything that could split or smuggle
/// a message (CR, LF or NUL in a field, a method or name that is not a token, a target with
/// whitespace).
enum HTTP1RequestEncoder {
    /// The request line and header fields, ending with the empty line.
    static func head(method: String, target: String, headers: HTTPHeaders) throws -> [UInt8] {
        guard !method.isEmpty, method.utf8.allSatisfy(isTokenByte) else {
            throw SesameError(.invalidArgument, "'\(method.prefix(40))' is not a valid HTTP method")
        }
        guard !target.isEmpty, target.utf8.allSatisfy({ $0 > 0x20 && $0 != 0x7F }) else {
            throw SesameError(.invalidArgument, "the request target contains whitespace or control characters")
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        bytes += method.utf8
        bytes.append(0x20)
        bytes += target.utf8
        bytes += " HTTP/1.1\r\n".utf8
        for field in headers {
            guard !field.name.isEmpty, field.name.utf8.allSatisfy(isTokenByte) else {
                throw SesameError(.invalidArgument, "'\(field.name.prefix(40))' is not a valid header name")
            }
            guard !field.value.utf8.contains(where: { $0 == 0x0D || $0 == 0x0A || $0 == 0 }) else {
                throw SesameError(.invalidArgument, "the value of header '\(field.name)' contains CR, LF or NUL")
            }
            bytes += field.name.utf8
            bytes += ": ".utf8
            bytes += field.value.utf8
            bytes += "\r\n".utf8
        }
        bytes += "\r\n".utf8
        return bytes
    }

    /// One chunk of a chunked body (never empty: an empty chunk would end the body).
    static func chunk(_ data: [UInt8]) -> [UInt8] {
        precondition(!data.isEmpty, "an empty chunk ends a chunked body; use lastChunk")
        return Array(String(data.count, radix: 16).utf8) + [13, 10] + data + [13, 10]
    }

    /// The end of a chunked body (no trailers).
    static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)
}
