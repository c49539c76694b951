/// An `Authorization`-style value built in place: a scheme, then `name=value` parameters
/// separated by ", " (RFC 9110 section 11.4). Values go in as tokens or as quoted-strings.
struct AuthParameterList {
    private(set) var text: String
    private var isEmpty = true

    init(scheme: String) {
        text = scheme
        text.reserveCapacity(320)
        text += " "
    }

    /// `name=value`, `value` as it is (the caller knows it is a token, or an ext-value).
    mutating func append(_ name: String, token value: String) {
        startParameter(name)
        text += value
    }

    /// `name="value"`, with `"` and `\` escaped.
    mutating func append(_ name: String, quoted value: String) {
        startParameter(name)
        Self.appendQuoted(value, to: &text)
    }

    private mutating func startParameter(_ name: String) {
        if !isEmpty { text += ", " }
        isEmpty = false
        text += name
        text += "="
    }

    /// Appends `value` as an HTTP quoted-string: backslashes and double quotes escaped, byte by
    /// byte (a quote followed by a combining mark is one Character, but still a quote on the
    /// wire; both are ASCII, so this works on the UTF-8 bytes).
    static func appendQuoted(_ value: String, to text: inout String) {
        text += "\""
        if !value.utf8.contains(where: { $0 == UInt8(ascii: "\"") || $0 == UInt8(ascii: "\\") }) {
            text += value
        } else {
            var bytes: [UInt8] = []
            bytes.reserveCapacity(value.utf8.count + 8)
            for byte in value.utf8 {
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
                bytes.append(byte)
            }
            text += String(decoding: bytes, as: UTF8.self)
        }
        text += "\""
    }
}
