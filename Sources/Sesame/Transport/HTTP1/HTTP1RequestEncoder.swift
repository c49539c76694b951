/// Writes HTTP/1.1 request heads and chunked framing, refusing anything that could split or smuggle
/// a message (CR, LF or NUL in a field, a method or name that is not a token, a target with
/// whitespace).
enum HTTP1RequestEncoder {
    /// The request line and header fields, ending with the empty line.
    static func head(method: String, target: String, headers: HTTPHeaders) throws -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(256)
        // Each part is checked and copied from its contiguous UTF-8 in one pass (a head is
        // encoded for every request).
        guard append(method, to: &bytes, if: { !$0.isEmpty && $0.allSatisfy(isTokenByte) }) else {
            throw SesameError(.invalidArgument, "'\(method.prefix(40))' is not a valid HTTP method")
        }
        bytes.append(0x20)
        guard append(target, to: &bytes, if: { !$0.isEmpty && $0.allSatisfy { $0 > 0x20 && $0 != 0x7F } }) else {
            throw SesameError(.invalidArgument, "the request target contains whitespace or control characters")
        }
        append(" HTTP/1.1\r\n", to: &bytes)
        for field in headers {
            guard append(field.name, to: &bytes, if: { !$0.isEmpty && $0.allSatisfy(isTokenByte) }) else {
                throw SesameError(.invalidArgument, "'\(field.name.prefix(40))' is not a valid header name")
            }
            append(": ", to: &bytes)
            guard append(field.value, to: &bytes, if: { !$0.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 } })
            else {
                throw SesameError(.invalidArgument, "the value of header '\(field.name)' contains CR, LF or NUL")
            }
            append("\r\n", to: &bytes)
        }
        append("\r\n", to: &bytes)
        return bytes
    }

    /// Appends the UTF-8 of `text` to `bytes` when `valid` accepts it; returns whether it did.
    @discardableResult
    private static func append(
        _ text: String,
        to bytes: inout [UInt8],
        if valid: (UnsafeBufferPointer<UInt8>) -> Bool = { _ in true }
    ) -> Bool {
        var text = text
        return text.withUTF8 { utf8 in
            guard valid(utf8) else { return false }
            bytes.append(contentsOf: utf8)
            return true
        }
    }

    /// One chunk of a chunked body (never empty: an empty chunk would end the body).
    static func chunk(_ data: [UInt8]) -> [UInt8] {
        precondition(!data.isEmpty, "an empty chunk ends a chunked body; use lastChunk")
        return Array(String(data.count, radix: 16).utf8) + [13, 10] + data + [13, 10]
    }

    /// The end of a chunked body (no trailers).
    static let lastChunk: [UInt8] = Array("0\r\n\r\n".utf8)
}
