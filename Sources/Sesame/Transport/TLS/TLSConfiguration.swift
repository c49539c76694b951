/// How TLS client connections are made.
///
/// Secure by default: TLS 1.2 or newer, the system trust roots, full chain and host-name checks.
public struct TLSConfiguration: Hashable, Sendable {
    /// A TLS protocol version.
    public enum ProtocolVersion: Int, Hashable, Sendable, Comparable, CustomStringConvertible {
        /// TLS 1.2.
        case tls12 = 0x0303
        /// TLS 1.3.
        case tls13 = 0x0304

        public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
        public var description: String { self == .tls12 ? "TLSv1.2" : "TLSv1.3" }
    }

    /// The lowest version offered (default TLS 1.2; older versions are not supported at all).
    public var minimumVersion: ProtocolVersion = .tls12
    /// The highest version offered; `nil` is the newest the library knows.
    public var maximumVersion: ProtocolVersion? = nil
    /// ALPN protocol names to offer, in preference order (e.g. `["http/1.1"]`).
    public var applicationProtocols: [String] = []
    /// The anchors server chains are evaluated against by default handling.
    public var trustRoots: TrustRoots = .system
    /// The certificate policies server chains must be valid for (RFC 5280 §6.1.1); the default
    /// accepts any policy. Every evaluation of the connection's ``ServerTrust`` applies them.
    public var certificatePolicies = CertificatePolicyRequirements()
    /// Whether sessions may be resumed. A resumed session is never trusted on the strength of the
    /// earlier handshake: its stored chain goes through the same trust decision again.
    public var sessionResumption: Bool = true
    /// What happens to an OCSP response the server staples to the handshake (RFC 6066). Stapling is
    /// requested unless this is ``StapledOCSPPolicy/ignore``.
    public var stapledOCSP: StapledOCSPPolicy = .enforceWhenPresent
    /// Time allowed for the handshake's network exchanges. Time spent waiting for an asynchronous
    /// trust or client-certificate decision does not count here; the connection's connect timeout,
    /// which covers the whole handshake with its decisions, applies as well.
    public var handshakeTimeout: Duration = .seconds(30)

    /// The secure defaults.
    public static func makeClientConfiguration() -> TLSConfiguration { TLSConfiguration() }

    /// The defaults: TLS 1.2 and later, the system's trust roots, no client identity.
    public init() {}

    /// The settings that shape an OpenSSL context (timeouts do not).
    var contextKey: ContextKey {
        ContextKey(
            minimumVersion: minimumVersion,
            maximumVersion: maximumVersion,
            applicationProtocols: applicationProtocols,
            trustRoots: trustRoots,
            certificatePolicies: certificatePolicies
        )
    }

    struct ContextKey: Hashable, Sendable {
        let minimumVersion: ProtocolVersion
        let maximumVersion: ProtocolVersion?
        let applicationProtocols: [String]
        let trustRoots: TrustRoots
        let certificatePolicies: CertificatePolicyRequirements

        /// The settings that bind a session and a trust evaluation: contexts alike in these
        /// share their caches (see ``TLSContext``).
        var resumptionScope: ContextKey {
            ContextKey(
                minimumVersion: minimumVersion,
                maximumVersion: maximumVersion,
                applicationProtocols: [],
                trustRoots: trustRoots,
                certificatePolicies: certificatePolicies
            )
        }
    }
}
