/// Parses `WWW-Authenticate` / `Proxy-Authenticate` field values (RFC 9110 section 11): several
/// challenges in one field and across fields, token68 or auth-params, quoted-string escapes,
/// case-insensitive names, empty list elements.
///
/// Bounded: at most ``maximumFieldBytes`` of header text, ``maximumChallenges`` challenges and
/// ``maximumParameters`` parameters per challenge are looked at. A malformed challenge is skipped
/// (with a note in ``Result/problems``) and parsing resumes at the next one; a challenge that
/// repeats a parameter is dropped, since either value could be the one the server meant.
public enum AuthChallengeParser {
    /// The most bytes of challenge fields read from one response; more is a problem and is not
    /// parsed.
    public static let maximumFieldBytes = 16 * 1024
    /// The most challenges taken from one response; the rest are dropped as a problem.
    public static let maximumChallenges = 32
    /// The most parameters taken from one challenge; the rest are dropped as a problem.
    public static let maximumParameters = 32

    /// The challenges found, in order, and what had to be skipped.
    public struct Result: Sendable {
        /// The challenges parsed, in the order the server sent them.
        public var challenges: [HTTPAuthChallenge] = []
        /// What could not be parsed, each named and placed; the challenges that parsed are still
        /// usable.
        public var problems: [String] = []
    }

    /// Parses every field value (one per header line) in order.
    public static func parse(_ fieldValues: [String]) -> Result {
        var result = Result()
        var budget = maximumFieldBytes
        for value in fieldValues {
            var bytes = Array(value.utf8)
            if bytes.count > budget {
                bytes.removeLast(bytes.count - budget)
                result.problems.append("challenge fields longer than \(maximumFieldBytes) bytes were cut")
            }
            budget -= bytes.count
            var scanner = Scanner(bytes: bytes)
            scanner.parseField(into: &result)
            if budget <= 0 { break }
        }
        return result
    }

    /// Parses one field value.
    public static func parse(_ fieldValue: String) -> Result { parse([fieldValue]) }

    private struct Scanner {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) { self.bytes = bytes }

        var atEnd: Bool { index >= bytes.count }
        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 { index += 1 }
        }

        /// Skips whitespace and empty list elements.
        mutating func skipSeparators() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == UInt8(ascii: ",") { index += 1 }
        }

        mutating func token() -> String? {
            guard let range = skipToken() else { return nil }
            return String(decoding: bytes[range], as: UTF8.self)
        }

        /// A token in ASCII lower case (parameter names).
        mutating func lowercasedToken() -> String? {
            guard let range = skipToken() else { return nil }
            // Token bytes are ASCII: the string is valid UTF-8 as written.
            return String(unsafeUninitializedCapacity: range.count) { text in
                for (offset, byte) in bytes[range].enumerated() {
                    text[offset] = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
                }
                return range.count
            }
        }

        /// Moves past a token; its range, nil when none starts here.
        mutating func skipToken() -> Range<Int>? {
            let start = index
            while let byte = current, Self.isTokenByte(byte) { index += 1 }
            return index > start ? start..<index : nil
        }

        /// After a scheme and its space: a token68 only if it ends the element.
        mutating func token68() -> String? {
            let start = index
            while let byte = current, Self.isToken68Byte(byte) { index += 1 }
            guard index > start else { return nil }
            while current == UInt8(ascii: "=") { index += 1 }
            let end = index
            skipWhitespace()
            guard atEnd || current == UInt8(ascii: ",") else {
                index = start
                return nil
            }
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }

        /// True when an auth-param (`token BWS "=" BWS value`) starts here; `realm=` alone, like
        /// `abc==`, is a token68.
        func startsParameter() -> Bool {
            var probe = self
            guard probe.skipToken() != nil else { return false }
            probe.skipWhitespace()
            guard probe.current == UInt8(ascii: "=") else { return false }
            probe.index += 1
            probe.skipWhitespace()
            guard let next = probe.current else { return false }
            return next != UInt8(ascii: "=") && next != UInt8(ascii: ",")
        }

        mutating func quotedString() -> String? {
            guard current == UInt8(ascii: "\"") else { return nil }
            index += 1
            var value: [UInt8] = []
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return String(decoding: value, as: UTF8.self)
                case UInt8(ascii: "\\"):
                    // quoted-pair: a backslash before HTAB, SP, VCHAR or obs-text only.
                    guard let escaped = current, escaped == 0x09 || (escaped >= 0x20 && escaped != 0x7F) else {
                        return nil
                    }
                    index += 1
                    value.append(escaped)
                case 0x00..<0x09, 0x0A..<0x20, 0x7F:
                    return nil
                default:
                    value.append(byte)
                }
            }
            return nil
        }

        mutating func skipToNextElement() {
            var inQuotes = false
            while let byte = current {
                if inQuotes {
                    if byte == UInt8(ascii: "\\") { index += 1 } else if byte == UInt8(ascii: "\"") { inQuotes = false }
                } else if byte == UInt8(ascii: "\"") {
                    inQuotes = true
                } else if byte == UInt8(ascii: ",") {
                    return
                }
                index += 1
            }
        }

        mutating func parseField(into result: inout Result) {
            skipSeparators()
            while !atEnd {
                guard result.challenges.count < maximumChallenges else {
                    result.problems.append("more than \(maximumChallenges) challenges; the rest were ignored")
                    return
                }
                guard let scheme = token() else {
                    result.problems.append("expected an authentication scheme at byte \(index)")
                    skipToNextElement()
                    skipSeparators()
                    continue
                }
                if let byte = current, byte != 0x20, byte != 0x09, byte != UInt8(ascii: ",") {
                    result.problems.append("'\(scheme)' is not followed by a space or comma")
                    skipToNextElement()
                    skipSeparators()
                    continue
                }
                skipWhitespace()
                if let challenge = parseChallengeBody(scheme: scheme, into: &result) {
                    result.challenges.append(challenge)
                }
                skipSeparators()
            }
        }

        /// The token68 or parameters after a scheme; leaves the index at the next challenge.
        mutating func parseChallengeBody(scheme: String, into result: inout Result) -> HTTPAuthChallenge? {
            if atEnd || current == UInt8(ascii: ",") {
                return HTTPAuthChallenge(scheme: scheme, token68: nil, parameters: [])
            }
            if !startsParameter(), let token68 = token68() {
                return HTTPAuthChallenge(scheme: scheme, token68: token68, parameters: [])
            }
            var parameters: [HTTPAuthChallenge.Parameter] = []
            var valid = true
            while startsParameter() {
                guard let name = lowercasedToken() else { break }
                skipWhitespace()
                index += 1  // "="
                skipWhitespace()
                let value: String?
                if current == UInt8(ascii: "\"") {
                    value = quotedString()
                } else {
                    value = token()
                }
                guard let value else {
                    result.problems.append("\(scheme): parameter '\(name)' has no valid value")
                    valid = false
                    skipToNextElement()
                    break
                }
                if parameters.contains(where: { $0.name == name }) {
                    result.problems.append("\(scheme): parameter '\(name)' appears twice; challenge dropped")
                    valid = false
                }
                if parameters.count == maximumParameters {
                    result.problems.append("\(scheme): more than \(maximumParameters) parameters; challenge dropped")
                    valid = false
                }
                parameters.append(HTTPAuthChallenge.Parameter(name: name, value: value))
                skipWhitespace()
                guard current == UInt8(ascii: ",") || atEnd else {
                    result.problems.append("\(scheme): unexpected text after parameter '\(name)'")
                    valid = false
                    skipToNextElement()
                    break
                }
                skipSeparators()
            }
            return valid ? HTTPAuthChallenge(scheme: scheme, token68: nil, parameters: parameters) : nil
        }

        static func isTokenByte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            case UInt8(ascii: "!"), UInt8(ascii: "#"), UInt8(ascii: "$"), UInt8(ascii: "%"), UInt8(ascii: "&"),
                UInt8(ascii: "'"), UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "^"), UInt8(ascii: "_"), UInt8(ascii: "`"), UInt8(ascii: "|"), UInt8(ascii: "~"):
                return true
            default:
                return false
            }
        }

        static func isToken68Byte(_ byte: UInt8) -> Bool {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                return true
            case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"), UInt8(ascii: "+"),
                UInt8(ascii: "/"):
                return true
            default:
                return false
            }
        }
    }
}
