import Foundation
import Sesame

/// How an internet password item and a `URLCredentialStorage` entry are one thing, as on Apple:
/// the server, port, protocol, security domain and authentication type are the protection
/// space's host, port, protocol (or proxy type), realm and method; the account is the user and
/// the data the password. Attributes a protection space has no field for (label, comment, path,
/// access group, accessibility, dates) are kept in a companion item of the same identifier.
enum KeychainInternetPassword {
    /// `kSecAttrProtocol` codes and the protocol or proxy type they stand for.
    private static let protocols: [(code: String, name: String, isProxy: Bool)] = [
        ("http", "http", false), ("htps", "https", false), ("ftp ", "ftp", false), ("ftps", "ftps", false),
        ("htpx", NSURLProtectionSpaceHTTPProxy, true), ("htsx", NSURLProtectionSpaceHTTPSProxy, true),
        ("ftpx", NSURLProtectionSpaceFTPProxy, true), ("sox ", NSURLProtectionSpaceSOCKSProxy, true),
        ("rtsx", "rtsp", true), ("ftpa", "ftpaccount", false), ("irc ", "irc", false), ("ircs", "ircs", false),
        ("nntp", "nntp", false), ("ntps", "nntps", false), ("pop3", "pop3", false), ("pops", "pop3s", false),
        ("smtp", "smtp", false), ("imap", "imap", false), ("imps", "imaps", false), ("ldap", "ldap", false),
        ("ldps", "ldaps", false), ("atlk", "appletalk", false), ("afp ", "afp", false), ("teln", "telnet", false),
        ("tels", "telnets", false), ("ssh ", "ssh", false), ("smb ", "smb", false), ("rtsp", "rtsp", false),
        ("daap", "daap", false), ("eppc", "eppc", false), ("ipp ", "ipp", false),
    ]

    /// `kSecAttrAuthenticationType` codes and the methods they stand for.
    private static let methods: [(code: String, method: AuthenticationMethod)] = [
        ("http", .httpBasic), ("httd", .httpDigest), ("form", .htmlForm), ("ntlm", .ntlm), ("dflt", .default),
    ]

    /// The attributes that live in the protection space and the account, not in the companion.
    static let spaceAttributes: Set<String> = Set(KeychainClass.internetPassword.primaryKey)

    /// The protection space and user an item's attributes name.
    static func space(
        of attributes: [String: KeychainValue]
    ) throws(KeychainFailure) -> (space: ProtectionSpace, user: String) {
        guard let host = attributes[kSecAttrServer as String]?.text, !host.isEmpty else {
            throw KeychainFailure(
                errSecParam,
                "an internet password needs kSecAttrServer: Sesame keeps it as the server's URLCredentialStorage entry"
            )
        }
        let code = attributes[kSecAttrProtocol as String]?.text
        let known = code.flatMap { code in protocols.first { $0.code == code } }
        let name = known?.name ?? code?.trimmingCharacters(in: .whitespaces).lowercased()
        var port = Int(attributes[kSecAttrPort as String]?.integer ?? 0)
        if port == 0 { port = defaultPort(name) ?? 0 }
        guard (1...65535).contains(port) else {
            throw KeychainFailure(
                errSecParam,
                port == 0
                    ? "an internet password for \(name ?? "no protocol") needs kSecAttrPort (the protocol has no default port here)"
                    : "kSecAttrPort \(port) is not a port number"
            )
        }
        let methodCode = attributes[kSecAttrAuthenticationType as String]?.text
        let method =
            methodCode.map { code in
                methods.first { $0.code == code }?.method ?? AuthenticationMethod(rawValue: code)
            } ?? .default
        let realm = attributes[kSecAttrSecurityDomain as String]?.text
        let space: ProtectionSpace
        if known?.isProxy == true {
            space = ProtectionSpace(
                proxyHost: host,
                port: port,
                type: name,
                realm: realm,
                authenticationMethod: method
            )
        } else {
            space = ProtectionSpace(host: host, port: port, protocol: name, realm: realm, authenticationMethod: method)
        }
        return (space, attributes[kSecAttrAccount as String]?.text ?? "")
    }

    /// The attributes of a stored credential's space and user.
    static func attributes(of space: ProtectionSpace, user: String) -> [String: KeychainValue] {
        let name = space.isProxy ? space.proxyType : space.protocol
        let code =
            protocols.first { $0.name == name && $0.isProxy == space.isProxy }?.code
            ?? name.map { $0.count < 4 ? $0.padding(toLength: 4, withPad: " ", startingAt: 0) : $0 }
        var attributes: [String: KeychainValue] = [
            kSecAttrServer as String: .string(space.host),
            kSecAttrPort as String: .number(Int64(space.port)),
            kSecAttrAccount as String: .string(user),
            kSecAttrAuthenticationType as String: .string(
                methods.first { $0.method == space.authenticationMethod }?.code ?? space.authenticationMethod.rawValue
            ),
        ]
        if let code { attributes[kSecAttrProtocol as String] = .string(code) }
        if let realm = space.realm { attributes[kSecAttrSecurityDomain as String] = .string(realm) }
        return attributes
    }

    /// The identifier of a space and user's item (and of its companion).
    static func id(of space: ProtectionSpace, user: String) -> String {
        let fields = [
            space.host.lowercased(), String(space.port), space.protocol ?? "", space.realm ?? "",
            space.authenticationMethod.rawValue, space.isProxy ? "proxy" : "server", space.proxyType ?? "", user,
        ]
        return "inet-" + Data(fields.joined(separator: "\n").utf8).base64EncodedString()
    }

    private static func defaultPort(_ scheme: String?) -> Int? {
        switch scheme {
        case "http": 80
        case "https": 443
        case "ftp": 21
        default: nil
        }
    }
}
