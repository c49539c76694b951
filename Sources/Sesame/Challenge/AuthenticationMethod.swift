/// How a protection space wants to be answered (`NSURLAuthenticationMethod*`).
///
/// The raw values of the methods Apple defines are Apple's strings, so values written by ported
/// code compare equal. A scheme Sesame does not implement (Bearer, a vendor scheme) is still a
/// method, ``httpScheme(_:)``, so a delegate can see it and answer or reject it.
public struct AuthenticationMethod: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    public let rawValue: String

    public init(rawValue: String) { self.rawValue = rawValue }

    /// Whatever the server asks for, with a user and password (`NSURLAuthenticationMethodDefault`).
    public static let `default` = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodDefault")
    /// HTTP Basic (RFC 7617).
    public static let httpBasic = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodHTTPBasic")
    /// HTTP Digest (RFC 7616).
    public static let httpDigest = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodHTTPDigest")
    /// An HTML form (never issued by Sesame; kept so ported code compiles and compares).
    public static let htmlForm = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodHTMLForm")
    /// Kerberos / SPNEGO (`Negotiate`): session-wide.
    public static let negotiate = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodNegotiate")
    /// NTLM: session-wide.
    public static let ntlm = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodNTLM")
    /// The server's certificate chain is to be trusted or not (TLS handshake).
    public static let serverTrust = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodServerTrust")
    /// The server asks for a client certificate (TLS handshake).
    public static let clientCertificate = AuthenticationMethod(rawValue: "NSURLAuthenticationMethodClientCertificate")

    private static let schemePrefix = "SesameAuthenticationScheme:"

    /// An HTTP authentication scheme by its name in `WWW-Authenticate` (case-insensitive):
    /// `Basic`, `Digest`, `Negotiate` and `NTLM` map to the methods above, anything else (such as
    /// `Bearer`) to a method of its own.
    public static func httpScheme(_ name: String) -> AuthenticationMethod {
        switch name.lowercased() {
        case "basic": .httpBasic
        case "digest": .httpDigest
        case "negotiate": .negotiate
        case "ntlm": .ntlm
        default: AuthenticationMethod(rawValue: schemePrefix + name.lowercased())
        }
    }

    /// The scheme name as it appears in an `Authorization` header, for HTTP methods.
    public var schemeName: String? {
        switch self {
        case .httpBasic: "Basic"
        case .httpDigest: "Digest"
        case .negotiate: "Negotiate"
        case .ntlm: "NTLM"
        default: rawValue.hasPrefix(Self.schemePrefix) ? String(rawValue.dropFirst(Self.schemePrefix.count)) : nil
        }
    }

    /// Server trust, client certificates, Negotiate and NTLM concern a whole connection, so they
    /// go to the session delegate's session-level method first; the others go to the task-level
    /// method first (see the ChallengeFlow article).
    public var isSessionWide: Bool {
        self == .serverTrust || self == .clientCertificate || self == .negotiate || self == .ntlm
    }

    /// Methods answered with a user name and password.
    public var usesPassword: Bool {
        self == .httpBasic || self == .httpDigest || self == .default || self == .htmlForm || self == .ntlm
    }

    public var description: String {
        switch self {
        case .default: "default"
        case .htmlForm: "HTML form"
        case .serverTrust: "server trust"
        case .clientCertificate: "client certificate"
        default: schemeName ?? rawValue
        }
    }
}
