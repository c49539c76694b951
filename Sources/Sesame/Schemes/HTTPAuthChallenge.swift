/// One challenge from a `WWW-Authenticate` or `Proxy-Authenticate` field (RFC 9110 section 11.2):
/// a scheme, then either a token68 or auth-params.
public struct HTTPAuthChallenge: Sendable, Hashable, CustomStringConvertible {
    /// The scheme as the server spelled it (compare with ``AuthenticationMethod/httpScheme(_:)``).
    public let scheme: String
    /// The token68 form (`Negotiate abc==`), when used instead of parameters.
    public let token68: String?
    /// Parameters in order, names lowercased, values unquoted.
    public let parameters: [Parameter]

    /// A name and its value.
    public struct Parameter: Sendable, Hashable {
        public let name: String
        public let value: String
    }

    /// The value of the parameter `name` (any case); nil when absent.
    public func parameter(_ name: String) -> String? {
        let lowered = name.lowercased()
        return parameters.first { $0.name == lowered }?.value
    }

    /// The authentication method the scheme stands for.
    public var method: AuthenticationMethod { .httpScheme(scheme) }

    /// The realm parameter.
    public var realm: String? { parameter("realm") }

    public var description: String {
        if let token68 { return "\(scheme) \(token68)" }
        let rendered = parameters.map { "\($0.name)=\(Self.quoted($0.value))" }
        return ([scheme] + [rendered.joined(separator: ", ")].filter { !$0.isEmpty }).joined(separator: " ")
    }

    /// `text` as an HTTP quoted-string: backslashes and double quotes escaped, scalar by scalar
    /// (a quote followed by a combining mark is one Character, but still a quote on the wire).
    static func quoted(_ text: String) -> String {
        // The quote and the backslash are ASCII, so escaping works on the UTF-8 bytes.
        var bytes: [UInt8] = [UInt8(ascii: "\"")]
        bytes.reserveCapacity(text.utf8.count + 8)
        for byte in text.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { bytes.append(UInt8(ascii: "\\")) }
            bytes.append(byte)
        }
        bytes.append(UInt8(ascii: "\""))
        return String(decoding: bytes, as: UTF8.self)
    }
}
