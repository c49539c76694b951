import Foundation
import Sesame

public let NSURLProtectionSpaceHTTP = "http"
public let NSURLProtectionSpaceHTTPS = "https"
public let NSURLProtectionSpaceFTP = "ftp"
public let NSURLProtectionSpaceHTTPProxy = "http"
public let NSURLProtectionSpaceHTTPSProxy = "https"
public let NSURLProtectionSpaceFTPProxy = "ftp"
public let NSURLProtectionSpaceSOCKSProxy = "SOCKS"

public let NSURLAuthenticationMethodDefault = "NSURLAuthenticationMethodDefault"
public let NSURLAuthenticationMethodHTTPBasic = "NSURLAuthenticationMethodHTTPBasic"
public let NSURLAuthenticationMethodHTTPDigest = "NSURLAuthenticationMethodHTTPDigest"
public let NSURLAuthenticationMethodHTMLForm = "NSURLAuthenticationMethodHTMLForm"
public let NSURLAuthenticationMethodNTLM = "NSURLAuthenticationMethodNTLM"
public let NSURLAuthenticationMethodNegotiate = "NSURLAuthenticationMethodNegotiate"
public let NSURLAuthenticationMethodClientCertificate = "NSURLAuthenticationMethodClientCertificate"
public let NSURLAuthenticationMethodServerTrust = "NSURLAuthenticationMethodServerTrust"

/// Where a credential applies (`URLProtectionSpace`): a server or proxy, its realm and
/// authentication method. Two spaces with the same fields are equal, so a credential stored for
/// one is found for the other (Apple's behaviour; FoundationNetworking's spaces never compare equal).
open class URLProtectionSpace: NSObject, @unchecked Sendable {
    // @unchecked: immutable.
    let space: ProtectionSpace
    private let trust: SecTrust?

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

    public var host: String { space.host }
    public var port: Int { space.port }
    public var `protocol`: String? { space.protocol }
    public var realm: String? { space.realm }
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
