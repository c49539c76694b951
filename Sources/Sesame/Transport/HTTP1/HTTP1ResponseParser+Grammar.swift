// The pieces of RFC 9112 / RFC 9110 grammar the response parser needs: status line, field lines,
// chunk sizes, token characters.
extension HTTP1ResponseParser {
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
