// The pieces of RFC 9112 / RFC 9110 grammar the response parser needs: status line, field lines,
// chunk sizes, token characters, and how a body is delimited.
extension HTTP1ResponseParser {
    /// How a response's body is delimited (RFC 9112 section 6.3).
    enum BodyFraming: Equatable {
        /// No body (HEAD, 1xx, 204, 304).
        case none
        /// A successful CONNECT: the tunnel starts right after the head.
        case tunnel
        case fixed(UInt64)
        case chunked
        /// Delimited by the server closing the connection.
        case untilClose
    }

    /// The common case of Content-Length, read without building lists: exactly one field, all
    /// digits (at most 19, so it fits). Nil for anything else, which the full rules then judge.
    static func plainContentLength(_ headers: HTTPHeaders) -> UInt64? {
        var found: String?
        for field in headers where field.name.caseInsensitiveEquals("Content-Length") {
            guard found == nil else { return nil }
            found = field.value
        }
        guard let found, (1...19).contains(found.utf8.count),
            found.utf8.allSatisfy({ (0x30...0x39).contains($0) })
        else { return nil }
        return UInt64(found)
    }

    /// The framing of the body that follows `head`, and whether the connection may carry another
    /// exchange after it: HTTP/1.0 only with `Connection: keep-alive`, HTTP/1.1 unless
    /// `Connection: close`; never after a body read to the close, a 101, Transfer-Encoding beside
    /// Content-Length (RFC 9112 6.1: a possible smuggling attempt) or a successful CONNECT.
    static func framing(
        of head: HTTP1ResponseHead,
        isHeadRequest: Bool,
        isConnectRequest: Bool
    ) throws(SesameError) -> (BodyFraming, reusable: Bool) {
        let keepsAlive =
            head.minorVersion == 0
            ? head.headers.containsToken("keep-alive", in: "Connection")
            : !head.headers.containsToken("close", in: "Connection")
        if isConnectRequest && (200..<300).contains(head.status) { return (.tunnel, false) }
        if isHeadRequest || head.status == 204 || head.status == 304 || head.isInformational {
            return (.none, keepsAlive && head.status != 101)
        }
        var (codings, chunkedCodings, lastIsChunked) = (0, 0, false)
        head.headers.forEachToken(in: "Transfer-Encoding") { coding in
            codings += 1
            lastIsChunked = equalsIgnoringASCIICase(coding, "chunked")
            if lastIsChunked { chunkedCodings += 1 }
            return true
        }
        if codings > 0 {
            let reusable = keepsAlive && !head.headers.contains("Content-Length")
            guard lastIsChunked else { return (.untilClose, false) }
            guard chunkedCodings == 1 else {
                throw SesameError(.protocolError, "Transfer-Encoding applies chunked more than once")
            }
            return (.chunked, reusable)
        }
        if let length = plainContentLength(head.headers) { return (.fixed(length), keepsAlive) }
        let lengths = head.headers.values(for: "Content-Length").flatMap {
            $0.split(separator: ",", omittingEmptySubsequences: false)
        }
        .map { $0.trimmingSpaces() }
        guard let first = lengths.first else { return (.untilClose, false) }
        guard let length = UInt64(first), first.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw SesameError(.protocolError, "Content-Length '\(first.prefix(40))' is not a number")
        }
        if let other = lengths.first(where: { $0 != first }) {
            throw SesameError(
                .protocolError,
                "conflicting Content-Length values \(first.prefix(20)) and \(other.prefix(20))"
            )
        }
        return (.fixed(length), keepsAlive)
    }

    static func statusLine(_ line: ArraySlice<UInt8>) throws -> (minor: Int, status: Int, reason: String) {
        let start = line.startIndex
        func malformed() -> SesameError {
            SesameError(.protocolError, "malformed status line '\(text(line.prefix(80)))'")
        }
        guard line.count >= 12, line.prefix(7).elementsEqual("HTTP/1.".utf8), line[start + 8] == 0x20,
            (0x30...0x39).contains(line[start + 7])
        else {
            if line.starts(with: "HTTP/2".utf8) || line.starts(with: "HTTP/3".utf8) {
                throw SesameError(
                    .protocolError,
                    "the server answered with \(text(line.prefix(8))) on an HTTP/1.1 connection"
                )
            }
            throw malformed()
        }
        let digits = line[(start + 9)..<(start + 12)]
        guard digits.allSatisfy({ (0x30...0x39).contains($0) }), line.count == 12 || line[start + 12] == 0x20 else {
            throw malformed()
        }
        let status = digits.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        guard status >= 100 else { throw malformed() }
        let reason = line.count > 13 ? String(decoding: line[(start + 13)...], as: UTF8.self) : ""
        return (Int(line[start + 7] - 0x30), status, reason)
    }

    /// One field line: the name (a token, no whitespace before the colon) and the value without
    /// surrounding whitespace (no NUL).
    static func field(_ line: ArraySlice<UInt8>, section: String) throws -> (name: String, value: String) {
        // One pass over the bytes in place (this runs for every field of every response).
        let parsed = line.withUnsafeBufferPointer { bytes -> (name: String, value: String)? in
            var colon = 0
            while colon < bytes.count, bytes[colon] != UInt8(ascii: ":") {
                guard isTokenByte(bytes[colon]) else { return nil }
                colon += 1
            }
            guard colon > 0, colon < bytes.count else { return nil }
            var start = colon + 1
            var end = bytes.count
            while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { start += 1 }
            while end > start, bytes[end - 1] == 0x20 || bytes[end - 1] == 0x09 { end -= 1 }
            var index = start
            while index < end {
                guard bytes[index] != 0 else { return nil }
                index += 1
            }
            return (
                String(decoding: UnsafeBufferPointer(rebasing: bytes[..<colon]), as: UTF8.self),
                String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            )
        }
        if let parsed { return parsed }
        throw fieldError(line, section: section)
    }

    /// Why `line` is not a valid field line (see ``field(_:section:)``).
    private static func fieldError(_ line: ArraySlice<UInt8>, section: String) -> SesameError {
        guard let colon = line.firstIndex(of: UInt8(ascii: ":")) else {
            return SesameError(.protocolError, "\(section) line without a colon: '\(text(line.prefix(80)))'")
        }
        let name = line[..<colon]
        guard !name.isEmpty, name.allSatisfy(isTokenByte) else {
            let shown = text(name.prefix(80))
            return SesameError(
                .protocolError,
                name.last == 0x20 || name.last == 0x09
                    ? "whitespace between the \(section) name '\(shown.trimmingSpaces())' and its colon"
                    : "invalid \(section) name '\(shown)'"
            )
        }
        return SesameError(.protocolError, "a NUL byte in the value of \(section) '\(text(name))'")
    }

    /// `bytes` without leading and trailing spaces and tabs.
    static func trimmed(_ bytes: ArraySlice<UInt8>) -> ArraySlice<UInt8> {
        guard let first = bytes.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }) else { return [] }
        let last = bytes.lastIndex(where: { $0 != 0x20 && $0 != 0x09 }) ?? first
        return bytes[first...last]
    }

    /// Bytes from the wire as text (invalid UTF-8 is replaced, never trusted).
    static func text<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String { String(decoding: bytes, as: UTF8.self) }

    static func chunkSize(_ line: ArraySlice<UInt8>) throws -> UInt64 {
        // Read in place: every chunk of every chunked body comes through here.
        var size: UInt64 = 0
        var digits = 0
        var index = line.startIndex
        while index < line.endIndex, let value = hexValue(line[index]) {
            digits += 1
            guard digits <= 16 else { throw SesameError(.protocolError, "chunk size is too large") }
            size = size << 4 | UInt64(value)
            index += 1
        }
        guard digits > 0 else {
            throw SesameError(
                .protocolError,
                "chunk size '\(String(decoding: line.prefix(40), as: UTF8.self))' is not hexadecimal"
            )
        }
        // What may follow: optional whitespace, then ";" chunk extensions (ignored).
        while index < line.endIndex, line[index] == 0x20 || line[index] == 0x09 { index += 1 }
        guard index == line.endIndex || line[index] == 0x3B else {
            throw SesameError(
                .protocolError,
                "chunk size '\(String(decoding: line.prefix(40), as: UTF8.self))' is not hexadecimal"
            )
        }
        return size
    }

    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }
}

/// RFC 9110 token characters.
func isTokenByte(_ byte: UInt8) -> Bool {
    switch byte {
    case 0x30...0x39, 0x41...0x5A, 0x61...0x7A: return true
    case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
        UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
        UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
        return true
    default: return false
    }
}
