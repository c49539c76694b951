import FoundationEssentials
import Glibc

/// How a ``Session`` makes requests.
public struct SessionConfiguration: Sendable {
    /// Time allowed for making each connection: resolving the name, the TCP connection and the
    /// TLS handshake (with the trust and client-certificate decisions it waits for) together, as
    /// curl's `--connect-timeout`. Past it the task fails with ``SesameError/Code/connectTimeout``.
    public var connectTimeout: Duration = .seconds(60)
    /// Idle time allowed while waiting for the next bytes of a response (URLSession's
    /// `timeoutIntervalForRequest`); a request's own ``HTTPRequest/timeout`` overrides it.
    public var requestTimeout: Duration = .seconds(60)
    /// How long a request body sent with `Expect: 100-continue` waits for the server's `100`
    /// before it goes anyway (a server need not answer the expectation; RFC 9110 section
    /// 10.1.1), as curl's `--expect100-timeout`. A final answer that comes first means the body
    /// is not sent.
    public var expectContinueTimeout: Duration = .seconds(1)
    /// Total time allowed for a task, redirects included (URLSession's `timeoutIntervalForResource`,
    /// curl's `--max-time`): one deadline over waiting for a connection, connecting, sending and
    /// every read. Past it the task fails with ``SesameError/Code/timeout``.
    public var resourceTimeout: Duration = .seconds(7 * 24 * 3600)
    /// How long the answer of a name lookup is reused, as curl's DNS cache (60 s) and the JVM's
    /// address cache (30 s) do. Connections to one host made at the same time also wait for one
    /// lookup instead of making one each. The answers are kept for the whole process; a connection
    /// that reaches none of a name's addresses drops its answer, so the next one asks again.
    /// `nil` or `.zero`: every connection looks its name up.
    public var nameCacheLifetime: Duration? = .seconds(30)
    /// The most connections open to one scheme, host and port; further requests wait in order.
    public var maximumConnectionsPerHost = 6
    /// How long an unused keep-alive connection is kept before it is closed.
    public var idleTimeout: Duration = .seconds(60)
    /// Header fields added to every request that does not set them itself.
    public var defaultHeaders: HTTPHeaders = ["User-Agent": "Sesame/\(Sesame.version)", "Accept": "*/*"]
    /// TLS versions and trust roots for `https` requests. A session offers the ALPN protocols
    /// ``httpVersion`` calls for (`h2, http/1.1` or `http/1.1`), whatever
    /// ``TLSConfiguration/applicationProtocols`` says; an HTTPS proxy is offered `http/1.1`.
    public var tls: TLSConfiguration = .makeClientConfiguration()
    /// Which HTTP versions requests use: HTTP/2 where TLS negotiates it, by default.
    public var httpVersion: HTTPVersionPreference = .http2
    /// An HTTP/2 connection left without streams at least this long is sent a PING before it
    /// carries the next request; without an answer (within ``connectTimeout``, 5 s at most) it is
    /// closed and the request goes on a new connection. nil: no check.
    public var http2IdlePingThreshold: Duration? = .seconds(10)
    /// How a server's certificate is judged when no delegate decides otherwise (default handling):
    /// AFNetworking's policy with pinning. nil: standard evaluation against ``tls``'s trust roots.
    public var securityPolicy: SecurityPolicy?
    /// Per-host evaluators (exact and wildcard host keys), used before ``securityPolicy``; with
    /// ``ServerTrustManager/allHostsMustBeEvaluated`` a host without one is refused.
    public var serverTrustManager: ServerTrustManager?
    /// The asynchronous trust and client-certificate decisions of every TLS handshake.
    public var handshakeHooks: TLSHandshakeHooks = .default
    /// Whether 301, 302, 303, 307 and 308 responses are followed.
    public var followsRedirects = true
    /// The most redirects one task follows.
    public var maximumRedirects = 20
    /// Whether `gzip`, `deflate` and `br` (brotli) response bodies are decoded (and `Accept-Encoding` sent).
    public var decodesContent = true
    /// The most bytes a decoded body may grow to.
    public var maximumDecodedBodySize = 1 << 32

    /// Where credentials are looked up before a delegate is asked, and where credentials that
    /// worked are kept (per their persistence). nil: no storage at all.
    public var credentialStorage: CredentialStorage? = .shared
    /// Failed attempts per protection space (across schemes) after which a 401/407 is delivered
    /// without asking again.
    public var maximumAuthenticationFailures = 3
    /// Challenge round trips one task makes (requests sent again with a credential), across
    /// every protection space, before a 401 is delivered as it is; 407s from a proxy have a bound
    /// of their own of the same size. On top of ``maximumAuthenticationFailures``: a server that
    /// names a new realm or sends a new stale nonce each time cannot keep a task going.
    public var maximumChallengeRoundTrips = 10
    /// Whether any password may be sent readable on the wire (Basic over `http`), to every origin
    /// and proxy the session reaches. Off by default: a stored or `.netrc` credential is then not
    /// used for such a space, and a delegate's is refused with
    /// ``SesameError/Code/cleartextCredentialRefused``.
    ///
    /// A password written into a request's URL (or a proxy's URL) is consent for that password
    /// and that origin (or proxy) alone, without this setting: it is sent there over `http`, and
    /// a redirect to another host does not carry the consent along.
    /// - Warning: On, a password stored for any host the session is redirected to is sent where
    ///   anyone on the path can read it.
    public var allowsCleartextPasswords = false
    /// The HTTP authentication methods answered (nil: all). Challenges with other methods are
    /// ignored as if the server had not offered them (curl's `--digest`, `--basic`).
    public var authenticationMethods: Set<AuthenticationMethod>?
    /// The HTTP authentication methods answered for proxies (nil: all; curl's `--proxy-digest`,
    /// `--proxy-basic`).
    public var proxyAuthenticationMethods: Set<AuthenticationMethod>?
    /// What a Negotiate (Kerberos) answer may do: forward the ticket (``NegotiateOptions/delegation``),
    /// fall back to NTLM through SPNEGO. A Negotiate challenge is answered with the user's ticket
    /// cache by default handling, or with a ticket acquired with the password of a
    /// ``Credential/init(user:password:persistence:)``; GSSAPI (`libgssapi_krb5.so.2`) is loaded
    /// when the first one arrives.
    public var negotiate = NegotiateOptions()
    /// Proxies: by default those the environment names (`http_proxy`, `https_proxy`, `all_proxy`,
    /// `no_proxy`, as curl reads them); ``ProxyConfiguration/none`` turns them off.
    public var proxy: ProxyConfiguration = .environment()
    /// Client identities for default handling of client-certificate challenges, by host: an exact
    /// host name, `*.example.com` (any subdomain), or `*` (any host). The most specific key wins;
    /// without a match no certificate is sent.
    public var clientIdentities: [String: Identity] = [:]
    /// Where cookies are kept (``CookieStore/shared`` by default); nil: no cookies at all.
    public var cookieStore: CookieStore? = .shared
    /// Whether responses' `Set-Cookie` are stored and matching cookies sent (`httpShouldSetCookies`);
    /// a request can opt out on its own with ``HTTPRequest/handlesCookies``.
    public var handlesCookies = true
    /// Bearer tokens (RFC 6750) for the origins it names, refreshed when a server refuses one: one
    /// refresh at a time, however many requests wait for it. nil: no token is sent, and a
    /// `Bearer` challenge goes to the delegates like any scheme Sesame does not answer itself.
    public var bearerAuthentication: BearerAuthentication?
    /// Whether `.netrc` entries answer challenges (curl's `--netrc`).
    public var usesNetrc = false
    /// The `.netrc` file to read; nil: `$NETRC`, else `~/.netrc`.
    public var netrcFile: URL?

    /// Receives ``SessionEvent``s (connections, TLS, heads, redirects) as they happen.
    public var eventObserver: (@Sendable (SessionEvent) -> Void)?

    /// The defaults.
    public static var `default`: SessionConfiguration { SessionConfiguration() }

    /// The default configuration (the same as ``default``).
    public init() {}
}
