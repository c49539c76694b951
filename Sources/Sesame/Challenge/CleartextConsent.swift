import FoundationEssentials
import Glibc

/// A password the caller wrote into a URL, the request's own or a proxy's: consent to send that
/// password readable on the wire (Basic over `http`) to that server or proxy, and to nothing else.
///
/// Consent belongs to the credential and the place it was given for (DESIGN section 3): after a
/// redirect to another host, a password stored or in `.netrc` for that host is still refused over
/// cleartext, and the password given for the first host is never offered to the second.
struct CleartextConsent: Sendable, Equatable {
    let host: String
    let port: Int
    /// `http` or `https` (for a proxy, how Sesame talks to it).
    let scheme: String
    let isProxy: Bool
    let user: String
    let password: String

    /// Consent for the user and password in a request URL, for that URL's origin.
    init?(requestURL url: URL) {
        guard let origin = Origin(url), let user = url.user(percentEncoded: false),
            let password = url.password(percentEncoded: false)
        else { return nil }
        self.init(
            host: origin.host,
            port: origin.port,
            scheme: origin.scheme,
            isProxy: false,
            user: user,
            password: password
        )
    }

    /// Consent for the credential written into a proxy's URL, for that proxy.
    init?(proxy: ProxyEndpoint, credential: Credential?) {
        guard let user = credential?.user, let password = credential?.password else { return nil }
        self.init(
            host: proxy.host,
            port: proxy.port,
            scheme: proxy.scheme,
            isProxy: true,
            user: user,
            password: password
        )
    }

    private init(host: String, port: Int, scheme: String, isProxy: Bool, user: String, password: String) {
        self.host = host
        self.port = port
        self.scheme = scheme
        self.isProxy = isProxy
        self.user = user
        self.password = password
    }

    /// Whether this consent covers sending `credential` for `space`: the same server (or proxy),
    /// port and scheme, and the same user and password.
    func covers(_ credential: Credential, for space: ProtectionSpace) -> Bool {
        space.isProxy == isProxy && space.port == port
            && (isProxy ? (space.proxyType ?? "http") : (space.protocol ?? "")) == scheme
            && space.host.caseInsensitiveEquals(host) && credential.user == user && credential.password == password
    }
}

/// Whether a password may go where it can be read on the wire: over a secure channel always; in
/// cleartext with the configuration's opt-in for every password, or with the caller's consent for
/// that password and that server.
struct CleartextPolicy: Sendable {
    /// The configuration's explicit opt-in for the whole session.
    var allowsEveryPassword: Bool
    var consent: CleartextConsent?

    func permits(_ credential: Credential, for space: ProtectionSpace) -> Bool {
        Self.protects(space) || allowsEveryPassword || consent?.covers(credential, for: space) == true
    }

    /// Whether the wire keeps the password from whoever can read it: TLS, or a scheme that never
    /// sends anything the password can be recovered from. Apple counts NTLM as secure
    /// (``ProtectionSpace/receivesCredentialSecurely``); Sesame does not over plain http, where
    /// an NTLMv2 response can be cracked offline, and treats it as Basic.
    static func protects(_ space: ProtectionSpace) -> Bool {
        guard space.authenticationMethod == .ntlm else { return space.receivesCredentialSecurely }
        return (space.isProxy ? space.proxyType : space.protocol) == "https"
    }

    /// The error for a password that would go out readable (or crackable) to `space`.
    static func refusal(for space: ProtectionSpace) -> SesameError {
        let what =
            space.authenticationMethod == .ntlm
            ? "an NTLM response that can be cracked offline" : "the password readable"
        return SesameError(
            .cleartextCredentialRefused,
            "\(space) would send \(what) on the wire; use https, or allow cleartext passwords in the configuration"
        )
    }
}
