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
        /// The parameter's name, lowercased.
        public let name: String
        /// The parameter's value, unquoted and unescaped.
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

    /// `text` as an HTTP quoted-string (see `AuthParameterList.appendQuoted`).
    static func quoted(_ text: String) -> String {
        var quoted = ""
        AuthParameterList.appendQuoted(text, to: &quoted)
        return quoted
    }
}
