import Foundation
import Sesame

/// The `http` protocol of a protection space.
public let NSURLProtectionSpaceHTTP = "http"
/// The `https` protocol of a protection space.
public let NSURLProtectionSpaceHTTPS = "https"
/// The `ftp` protocol of a protection space.
public let NSURLProtectionSpaceFTP = "ftp"
/// An HTTP proxy's type.
public let NSURLProtectionSpaceHTTPProxy = "http"
/// An HTTPS proxy's type.
public let NSURLProtectionSpaceHTTPSProxy = "https"
/// An FTP proxy's type.
public let NSURLProtectionSpaceFTPProxy = "ftp"
/// A SOCKS proxy's type.
public let NSURLProtectionSpaceSOCKSProxy = "SOCKS"

/// The scheme of the protocol's choosing (Basic for HTTP).
public let NSURLAuthenticationMethodDefault = "NSURLAuthenticationMethodDefault"
/// HTTP Basic (RFC 7617).
public let NSURLAuthenticationMethodHTTPBasic = "NSURLAuthenticationMethodHTTPBasic"
/// HTTP Digest (RFC 7616).
public let NSURLAuthenticationMethodHTTPDigest = "NSURLAuthenticationMethodHTTPDigest"
/// An HTML form. Never asked for by the loading system.
public let NSURLAuthenticationMethodHTMLForm = "NSURLAuthenticationMethodHTMLForm"
/// NTLM (NTLMv2 only). Answered with a `URLCredential(user:password:persistence:)`, the user as
/// `DOMAIN\user` or `user@domain`.
public let NSURLAuthenticationMethodNTLM = "NSURLAuthenticationMethodNTLM"
/// Negotiate (Kerberos through SPNEGO). Default handling answers with the user's ticket cache; a
/// `URLCredential(user:password:persistence:)` acquires a ticket with its password. Kerberos only,
/// unlike Apple's NTLM fallback (Migrating.md).
public let NSURLAuthenticationMethodNegotiate = "NSURLAuthenticationMethodNegotiate"
/// A client certificate, asked for during the TLS handshake.
public let NSURLAuthenticationMethodClientCertificate = "NSURLAuthenticationMethodClientCertificate"
/// The server's certificate chain, to be judged during the TLS handshake.
public let NSURLAuthenticationMethodServerTrust = "NSURLAuthenticationMethodServerTrust"

/// Where a credential applies (`URLProtectionSpace`): a server or proxy, its realm and
/// authentication method. Two spaces with the same fields are equal, so a credential stored for
/// one is found for the other (Apple's behaviour; FoundationNetworking's spaces never compare equal).
open class URLProtectionSpace: NSObject, @unchecked Sendable {
    // @unchecked: immutable.
    let space: ProtectionSpace
    private let trust: SecTrust?

    /// A server's protection space: `host`, `port`, `protocol` (`NSURLProtectionSpaceHTTPS`, ...),
    /// `realm` and method.
    public init(host: String, port: Int, protocol: String?, realm: String?, authenticationMethod: String?) {
        space = ProtectionSpace(
            host: host,
            port: port,
            protocol: `protocol`,
            realm: realm,
            authenticationMethod: Self.method(authenticationMethod)
        )
        trust = nil
    }

    /// A proxy's protection space: `host`, `port`, proxy `type` (`NSURLProtectionSpaceHTTPProxy`,
    /// ...), `realm` and method.
    public init(proxyHost host: String, port: Int, type: String?, realm: String?, authenticationMethod: String?) {
        space = ProtectionSpace(
            proxyHost: host,
            port: port,
            type: type,
            realm: realm,
            authenticationMethod: Self.method(authenticationMethod)
        )
        trust = nil
    }

    init(_ space: ProtectionSpace) {
        self.space = space
        trust = space.serverTrust.map(SecTrust.init)
    }

    /// The host, lowercased.
    public var host: String { space.host }
    /// The port.
    public var port: Int { space.port }
    /// The protocol (`http`, `https`); nil for a proxy's space.
    public var `protocol`: String? { space.protocol }
    /// The realm; nil when the method has none (server trust, client certificate).
    public var realm: String? { space.realm }
    /// The proxy type; nil for a server's space.
    public var proxyType: String? { space.proxyType }
    public override func isProxy() -> Bool { space.isProxy }
    /// Whether a password sent for this space cannot be read on the wire (https, or Digest).
    public var receivesCredentialSecurely: Bool { space.receivesCredentialSecurely }
    /// One of the `NSURLAuthenticationMethod…` constants.
    public var authenticationMethod: String { Self.name(space.authenticationMethod) }
    /// For client-certificate spaces: the DER-encoded names of the issuers the server accepts.
    public var distinguishedNames: [Data]? { space.distinguishedNames?.map(\.derEncoded) }
    /// For server-trust spaces: the trust to evaluate, and to answer with `URLCredential(trust:)`.
    public var serverTrust: SecTrust? { trust }

    public override func isEqual(_ object: Any?) -> Bool { (object as? URLProtectionSpace)?.space == space }
    public override var hash: Int { space.hashValue }
    /// Foundation's form: `<URLProtectionSpace 0x…>: Host:…, Server:…, Auth-Scheme:…, Realm:…,
    /// Port:…, Proxy:…, Proxy-Type:…` (`(null)` for an absent field).
    public override var description: String {
        let address = String(UInt(bitPattern: ObjectIdentifier(self).hashValue), radix: 16)
        let server = (space.isProxy ? nil : space.protocol) ?? "(null)"
        return "<\(type(of: self)) 0x\(address)>: Host:\(space.host), Server:\(server), "
            + "Auth-Scheme:\(authenticationMethod), Realm:\(space.realm ?? "(null)"), Port:\(space.port), "
            + "Proxy:\(space.isProxy ? "YES" : "NO"), Proxy-Type:\(space.proxyType ?? "(null)")"
    }

    static func method(_ name: String?) -> AuthenticationMethod {
        switch name {
        case NSURLAuthenticationMethodHTTPBasic: .httpBasic
        case NSURLAuthenticationMethodHTTPDigest: .httpDigest
        case NSURLAuthenticationMethodHTMLForm: .htmlForm
        case NSURLAuthenticationMethodNTLM: .ntlm
        case NSURLAuthenticationMethodNegotiate: .negotiate
        case NSURLAuthenticationMethodClientCertificate: .clientCertificate
        case NSURLAuthenticationMethodServerTrust: .serverTrust
        default: .default
        }
    }

    static func name(_ method: AuthenticationMethod) -> String {
        switch method {
        case .httpBasic: NSURLAuthenticationMethodHTTPBasic
        case .httpDigest: NSURLAuthenticationMethodHTTPDigest
        case .htmlForm: NSURLAuthenticationMethodHTMLForm
        case .ntlm: NSURLAuthenticationMethodNTLM
        case .negotiate: NSURLAuthenticationMethodNegotiate
        case .clientCertificate: NSURLAuthenticationMethodClientCertificate
        case .serverTrust: NSURLAuthenticationMethodServerTrust
        case .default: NSURLAuthenticationMethodDefault
        default: method.rawValue
        }
    }
}
