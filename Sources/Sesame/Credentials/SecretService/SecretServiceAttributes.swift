import FoundationEssentials
import Glibc

/// How a protection space and a user become Secret Service attributes under Sesame's schema, how
/// they are read back, and which items of libsecret's network-password schema
/// (`org.gnome.keyring.NetworkPassword`, written by other programs) answer a protection space.
/// No libsecret call happens here: the mapping is tested without a bus.
enum SecretServiceAttributes {
    /// Sesame's schema name (the item's `xdg:schema` attribute).
    static let schemaName = "org.sesame.Credential"
    /// libsecret's and GNOME Keyring's schema for network passwords.
    static let networkSchemaName = "org.gnome.keyring.NetworkPassword"

    /// Sesame's schema name for ``StoredItem``s.
    static let itemSchemaName = "org.sesame.Item"

    enum Kind: Int32 {
        case string = 0
        case integer = 1
        case boolean = 2
    }

    /// Sesame's attributes: the protection space's fields, the user and the default flag.
    static let schemaAttributes: [(String, Kind)] = [
        ("host", .string), ("port", .integer), ("protocol", .string), ("realm", .string),
        ("authentication-method", .string), ("proxy", .boolean), ("proxy-type", .string), ("user", .string),
        ("default", .boolean),
    ]
    /// libsecret's `SECRET_SCHEMA_COMPAT_NETWORK` attributes.
    static let networkAttributes: [(String, Kind)] = [
        ("user", .string), ("domain", .string), ("object", .string), ("protocol", .string), ("port", .integer),
        ("server", .string), ("authtype", .string),
    ]

    /// The attributes of a ``StoredItem``: its class and identifier (the rest is in its secret).
    static let itemAttributes: [(String, Kind)] = [("class", .string), ("id", .string)]

    /// The secret of a ``StoredItem``'s keyring item: the whole item as JSON, so attributes the
    /// schema does not name (and binary data) are kept as they are.
    static func secret(of item: StoredItem) throws(SesameError) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let bytes = try? encoder.encode(item) else {
            throw SesameError(.invalidArgument, "\(item) cannot be encoded")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// The ``StoredItem`` a keyring item holds; nil when its secret is not one, or names another
    /// class or identifier than its attributes (skipped, never guessed at).
    static func item(from attributes: [String: String], secret: String) -> StoredItem? {
        guard let item = try? JSONDecoder().decode(StoredItem.self, from: Data(secret.utf8)),
            item.itemClass == attributes["class"], item.id == attributes["id"]
        else { return nil }
        return item
    }

    /// The attributes of a stored credential (an absent realm, protocol or proxy type is an absent
    /// attribute, so it reads back as nil, not as an empty string).
    static func attributes(for space: ProtectionSpace, user: String, isDefault: Bool) -> [String: String] {
        var attributes = identity(of: space)
        attributes["user"] = user
        attributes["default"] = isDefault ? "true" : "false"
        return attributes
    }

    /// The attributes every item of `space` has (a search for the space's items; the realm and
    /// method are compared after reading, so a space without a realm never matches one with).
    static func query(for space: ProtectionSpace) -> [String: String] {
        ["host": space.host.lowercased(), "port": String(space.port), "proxy": space.isProxy ? "true" : "false"]
    }

    /// Every Sesame item, in two searches (libsecret matches nothing for no attributes, and every
    /// Sesame item has `proxy`; the schema's name is matched by libsecret).
    static let allQueries = [["proxy": "false"], ["proxy": "true"]]

    /// Every network-password item that names its schema (a search under that schema needs an
    /// attribute, as it does not match the name by itself).
    static let allNetworkQuery = ["xdg:schema": networkSchemaName]

    /// The protection space, user and default flag of an item's attributes; nil for an item that
    /// is not a well-formed Sesame item (it is skipped, never guessed at).
    static func entry(from attributes: [String: String]) -> (space: ProtectionSpace, user: String, isDefault: Bool)? {
        guard let host = attributes["host"], !host.isEmpty, let portText = attributes["port"],
            let port = Int(portText), (1...65535).contains(port), let user = attributes["user"],
            let method = attributes["authentication-method"], !method.isEmpty,
            let proxy = Bool(attributes["proxy"] ?? "")
        else { return nil }
        let space = ProtectionSpace(
            host: host,
            port: port,
            protocol: attributes["protocol"],
            realm: attributes["realm"],
            authenticationMethod: AuthenticationMethod(rawValue: method),
            isProxy: proxy,
            proxyType: attributes["proxy-type"]
        )
        return (space, user, attributes["default"] == "true")
    }

    /// The label a person sees in Seahorse: "Sesame: ada@api.example (API)".
    static func label(for space: ProtectionSpace, user: String) -> String {
        let host = space.host.lowercased()
        let name = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        let scheme = (space.isProxy ? space.proxyType : space.protocol) ?? ""
        let port = defaultPort(for: scheme) == space.port ? "" : ":\(space.port)"
        let proxy = space.isProxy ? "proxy " : ""
        let realm = space.realm.map { " (\($0))" } ?? ""
        return "Sesame: \(user)@\(proxy)\(name)\(port)\(realm)"
    }

    // MARK: - The network-password schema

    /// The search for network-password items of `space`'s server (nil for proxies: the schema has
    /// no notion of one).
    static func networkQuery(for space: ProtectionSpace) -> [String: String]? {
        guard !space.isProxy, space.protocol != nil else { return nil }
        return ["server": space.host.lowercased()]
    }

    /// The user of a network-password item when it answers `space`, else nil. The item must name
    /// the space's server and protocol; its port, when absent or 0, means the protocol's default
    /// port; its `authtype`, when given, must be the space's method (a `default` space takes any).
    /// The schema has no realm, so an item answers every realm of its server.
    static func networkUser(_ attributes: [String: String], answering space: ProtectionSpace) -> String? {
        guard !space.isProxy, let scheme = space.protocol,
            attributes["server"]?.lowercased() == space.host.lowercased(),
            attributes["protocol"]?.lowercased() == scheme,
            let user = attributes["user"], !user.isEmpty
        else { return nil }
        let port = attributes["port"].flatMap { Int($0) } ?? 0
        guard port == space.port || (port == 0 && defaultPort(for: scheme) == space.port) else { return nil }
        if let type = attributes["authtype"], !type.isEmpty, space.authenticationMethod != .default {
            guard AuthenticationMethod.httpScheme(type) == space.authenticationMethod else { return nil }
        }
        return user
    }

    /// The server space a network-password item names (for listing), or nil when it names none.
    static func networkSpace(_ attributes: [String: String]) -> (space: ProtectionSpace, user: String)? {
        guard let server = attributes["server"], !server.isEmpty, let scheme = attributes["protocol"]?.lowercased(),
            let user = attributes["user"], !user.isEmpty
        else { return nil }
        let given = attributes["port"].flatMap { Int($0) } ?? 0
        guard let port = given == 0 ? defaultPort(for: scheme) : given, (1...65535).contains(port) else { return nil }
        let method = attributes["authtype"].flatMap { $0.isEmpty ? nil : AuthenticationMethod.httpScheme($0) }
        let space = ProtectionSpace(
            host: server,
            port: port,
            protocol: scheme,
            realm: nil,
            authenticationMethod: method
        )
        return (space, user)
    }

    private static func identity(of space: ProtectionSpace) -> [String: String] {
        var attributes = [
            "host": space.host.lowercased(), "port": String(space.port),
            "authentication-method": space.authenticationMethod.rawValue, "proxy": space.isProxy ? "true" : "false",
        ]
        attributes["protocol"] = space.protocol
        attributes["realm"] = space.realm
        attributes["proxy-type"] = space.proxyType
        return attributes
    }

    private static func defaultPort(for scheme: String) -> Int? {
        switch scheme {
        case "http": 80
        case "https": 443
        default: nil
        }
    }
}
