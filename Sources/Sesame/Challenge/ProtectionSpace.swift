import FoundationEssentials
import Glibc

/// Where a credential applies: a server (or proxy), its port and protocol, a realm, and how it
/// authenticates (`NSURLProtectionSpace`).
///
/// Protection spaces are values. Two are equal when their host (ignoring case), port, protocol,
/// realm, authentication method, proxy flag and proxy type are equal; ``distinguishedNames`` and
/// ``serverTrust`` describe one challenge and take no part in equality.
public struct ProtectionSpace: Hashable, Sendable, CustomStringConvertible {
    /// The server's host name or IP address; for a proxy, the proxy's.
    public let host: String
    /// The server's port; for a proxy, the proxy's.
    public let port: Int
    /// `http` or `https` for servers; nil for proxies (see ``proxyType``).
    public let `protocol`: String?
    /// The realm the server named, if any. A credential stored for a nil realm serves every realm
    /// of its server.
    public let realm: String?
    /// How the space is answered.
    public let authenticationMethod: AuthenticationMethod
    /// True for a proxy's space (407 challenges).
    public let isProxy: Bool
    /// `http` or `https` for proxies; nil for servers.
    public let proxyType: String?
    /// For client-certificate challenges: the certificate authorities the server accepts.
    public let distinguishedNames: [DistinguishedName]?
    /// For server-trust challenges: the server's chain to evaluate.
    public let serverTrust: ServerTrust?

    /// A server's protection space (`init(host:port:protocol:realm:authenticationMethod:)`).
    public init(
        host: String,
        port: Int,
        protocol: String?,
        realm: String?,
        authenticationMethod: AuthenticationMethod?
    ) {
        self.init(
            host: host,
            port: port,
            protocol: `protocol`,
            realm: realm,
            authenticationMethod: authenticationMethod ?? .default,
            isProxy: false,
            proxyType: nil
        )
    }

    /// The protection space of an `http` or `https` URL's server (its scheme, host and port, the
    /// scheme's default port when none is given); nil for other URLs.
    public init?(url: URL, realm: String?, authenticationMethod: AuthenticationMethod?) {
        guard let origin = Origin(url) else { return nil }
        self.init(
            host: origin.host,
            port: origin.port,
            protocol: origin.scheme,
            realm: realm,
            authenticationMethod: authenticationMethod
        )
    }

    /// A proxy's protection space (`init(proxyHost:port:type:realm:authenticationMethod:)`).
    public init(
        proxyHost: String,
        port: Int,
        type: String?,
        realm: String?,
        authenticationMethod: AuthenticationMethod?
    ) {
        self.init(
            host: proxyHost,
            port: port,
            protocol: nil,
            realm: realm,
            authenticationMethod: authenticationMethod ?? .default,
            isProxy: true,
            proxyType: type ?? "http"
        )
    }

    init(
        host: String,
        port: Int,
        protocol: String?,
        realm: String?,
        authenticationMethod: AuthenticationMethod,
        isProxy: Bool,
        proxyType: String?,
        distinguishedNames: [DistinguishedName]? = nil,
        serverTrust: ServerTrust? = nil
    ) {
        self.host = IPAddressText.unbracketed(host)
        self.port = port
        self.protocol = `protocol`?.lowercased()
        self.realm = realm
        self.authenticationMethod = authenticationMethod
        self.isProxy = isProxy
        self.proxyType = proxyType?.lowercased()
        self.distinguishedNames = distinguishedNames
        self.serverTrust = serverTrust
    }

    /// True when a credential given for this space cannot be read on the wire: the connection is
    /// TLS, or the method never sends the secret itself (Digest, certificates, trust).
    public var receivesCredentialSecurely: Bool {
        if (isProxy ? proxyType : `protocol`) == "https" { return true }
        switch authenticationMethod {
        case .httpBasic, .default, .htmlForm: return false
        case .httpDigest, .clientCertificate, .serverTrust, .negotiate, .ntlm: return true
        default: return false
        }
    }

    /// The same space without its realm and method: the server (or proxy) it belongs to.
    var server: ProtectionSpace {
        ProtectionSpace(
            host: host,
            port: port,
            protocol: `protocol`,
            realm: nil,
            authenticationMethod: .default,
            isProxy: isProxy,
            proxyType: proxyType
        )
    }

    /// The same space with another realm and method.
    func with(realm: String?, method: AuthenticationMethod) -> ProtectionSpace {
        ProtectionSpace(
            host: host,
            port: port,
            protocol: `protocol`,
            realm: realm,
            authenticationMethod: method,
            isProxy: isProxy,
            proxyType: proxyType
        )
    }

    public static func == (lhs: ProtectionSpace, rhs: ProtectionSpace) -> Bool {
        lhs.host.lowercased() == rhs.host.lowercased() && lhs.port == rhs.port && lhs.protocol == rhs.protocol
            && lhs.realm == rhs.realm && lhs.authenticationMethod == rhs.authenticationMethod
            && lhs.isProxy == rhs.isProxy && lhs.proxyType == rhs.proxyType
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(host.lowercased())
        hasher.combine(port)
        hasher.combine(`protocol`)
        hasher.combine(realm)
        hasher.combine(authenticationMethod)
        hasher.combine(isProxy)
        hasher.combine(proxyType)
    }

    /// `https://host:port realm "R" (Basic)`, or `proxy http://host:port ...`.
    public var description: String {
        let name = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        let origin = "\((isProxy ? proxyType : `protocol`) ?? "?")://\(name):\(port)"
        let realmText = realm.map { " realm \"\($0)\"" } ?? ""
        return "\(isProxy ? "proxy " : "")\(origin)\(realmText) (\(authenticationMethod))"
    }
}

extension ProtectionSpace: Codable {
    private enum CodingKeys: String, CodingKey {
        case host, port, `protocol`, realm, authenticationMethod, isProxy, proxyType
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let port = try container.decode(Int.self, forKey: .port)
        guard (1...65535).contains(port) else {
            throw DecodingError.dataCorruptedError(forKey: .port, in: container, debugDescription: "port \(port)")
        }
        self.init(
            host: try container.decode(String.self, forKey: .host),
            port: port,
            protocol: try container.decodeIfPresent(String.self, forKey: .protocol),
            realm: try container.decodeIfPresent(String.self, forKey: .realm),
            authenticationMethod: try container.decode(AuthenticationMethod.self, forKey: .authenticationMethod),
            isProxy: try container.decode(Bool.self, forKey: .isProxy),
            proxyType: try container.decodeIfPresent(String.self, forKey: .proxyType)
        )
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(host, forKey: .host)
        try container.encode(port, forKey: .port)
        try container.encodeIfPresent(`protocol`, forKey: .protocol)
        try container.encodeIfPresent(realm, forKey: .realm)
        try container.encode(authenticationMethod, forKey: .authenticationMethod)
        try container.encode(isProxy, forKey: .isProxy)
        try container.encodeIfPresent(proxyType, forKey: .proxyType)
    }
}
