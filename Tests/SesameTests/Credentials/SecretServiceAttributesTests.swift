import Foundation
import Testing

@testable import Sesame

/// The mapping between protection spaces and Secret Service attributes, with no bus and no
/// libsecret: what is written, what reads back, and which network-password items answer a space.
@Suite struct SecretServiceAttributesTests {
    let server = ProtectionSpace(
        host: "API.example",
        port: 8443,
        protocol: "https",
        realm: "Ops",
        authenticationMethod: .httpDigest
    )
    let proxy = ProtectionSpace(
        proxyHost: "proxy.lan",
        port: 3128,
        type: "https",
        realm: "squid",
        authenticationMethod: .httpBasic
    )

    @Test func everyFieldOfTheSpaceIsAnAttributeAndReadsBackEqual() throws {
        for space in [
            server, proxy,
            ProtectionSpace(host: "::1", port: 80, protocol: "http", realm: nil, authenticationMethod: nil),
        ] {
            for isDefault in [true, false] {
                let attributes = SecretServiceAttributes.attributes(for: space, user: "Jäsøn Doe", isDefault: isDefault)
                let read = try #require(SecretServiceAttributes.entry(from: attributes))
                #expect(read.space == space)
                #expect(read.user == "Jäsøn Doe")
                #expect(read.isDefault == isDefault)
            }
        }
        let attributes = SecretServiceAttributes.attributes(for: server, user: "ada", isDefault: true)
        #expect(
            attributes == [
                "host": "api.example", "port": "8443", "protocol": "https", "realm": "Ops",
                "authentication-method": "NSURLAuthenticationMethodHTTPDigest", "proxy": "false", "user": "ada",
                "default": "true",
            ]
        )
        let proxyAttributes = SecretServiceAttributes.attributes(for: proxy, user: "p", isDefault: false)
        #expect(proxyAttributes["proxy"] == "true")
        #expect(proxyAttributes["proxy-type"] == "https")
        #expect(proxyAttributes["protocol"] == nil)
    }

    @Test func anAbsentRealmIsAnAbsentAttributeNotAnEmptyOne() throws {
        let none = ProtectionSpace(
            host: "a.example",
            port: 443,
            protocol: "https",
            realm: nil,
            authenticationMethod: .httpBasic
        )
        let empty = ProtectionSpace(
            host: "a.example",
            port: 443,
            protocol: "https",
            realm: "",
            authenticationMethod: .httpBasic
        )
        #expect(SecretServiceAttributes.attributes(for: none, user: "u", isDefault: false)["realm"] == nil)
        #expect(SecretServiceAttributes.attributes(for: empty, user: "u", isDefault: false)["realm"] == "")
        let readNone = try #require(
            SecretServiceAttributes.entry(
                from: SecretServiceAttributes.attributes(for: none, user: "u", isDefault: false)
            )
        )
        #expect(readNone.space == none)
        #expect(readNone.space != empty)
    }

    @Test func theQueryNarrowsByServerAndSchemaAndLeavesRealmAndMethodToTheComparison() {
        #expect(
            SecretServiceAttributes.query(for: server) == ["host": "api.example", "port": "8443", "proxy": "false"]
        )
        #expect(SecretServiceAttributes.query(for: proxy)["proxy"] == "true")
    }

    @Test func malformedItemsAreSkippedNotGuessedAt() {
        let good = SecretServiceAttributes.attributes(for: server, user: "ada", isDefault: false)
        for broken in ["host", "port", "user", "authentication-method", "proxy"] {
            var attributes = good
            attributes[broken] = nil
            #expect(SecretServiceAttributes.entry(from: attributes) == nil, "without \(broken)")
        }
        for (key, value) in [("port", "0"), ("port", "65536"), ("port", "443x"), ("proxy", "yes"), ("host", "")] {
            var attributes = good
            attributes[key] = value
            #expect(SecretServiceAttributes.entry(from: attributes) == nil, "\(key)=\(value)")
        }
    }

    @Test func labelsReadAsAPersonWouldLookForThem() {
        #expect(SecretServiceAttributes.label(for: server, user: "ada") == "Sesame: ada@api.example:8443 (Ops)")
        #expect(
            SecretServiceAttributes.label(
                for: ProtectionSpace(
                    host: "api.example",
                    port: 443,
                    protocol: "https",
                    realm: nil,
                    authenticationMethod: nil
                ),
                user: "ada"
            ) == "Sesame: ada@api.example"
        )
        #expect(SecretServiceAttributes.label(for: proxy, user: "p") == "Sesame: p@proxy proxy.lan:3128 (squid)")
        #expect(
            SecretServiceAttributes.label(
                for: ProtectionSpace(host: "::1", port: 80, protocol: "http", realm: nil, authenticationMethod: nil),
                user: "u"
            ) == "Sesame: u@[::1]"
        )
    }

    // MARK: - libsecret's network-password schema

    let site = ProtectionSpace(
        host: "intranet.example",
        port: 443,
        protocol: "https",
        realm: "Staff",
        authenticationMethod: .httpBasic
    )

    func network(_ attributes: [String: String]) -> [String: String] {
        ["server": "intranet.example", "protocol": "https", "user": "nina"].merging(attributes) { _, new in new }
    }

    @Test func aNetworkItemAnswersItsServerProtocolAndPortInEveryRealm() {
        #expect(SecretServiceAttributes.networkUser(network([:]), answering: site) == "nina")
        #expect(SecretServiceAttributes.networkUser(network(["port": "443"]), answering: site) == "nina")
        #expect(SecretServiceAttributes.networkUser(network(["port": "0"]), answering: site) == "nina")
        #expect(SecretServiceAttributes.networkUser(network(["server": "INTRANET.example"]), answering: site) == "nina")
        #expect(SecretServiceAttributes.networkUser(network(["authtype": "basic"]), answering: site) == "nina")
        #expect(
            SecretServiceAttributes.networkUser(network(["object": "/wiki", "domain": "CORP"]), answering: site)
                == "nina"
        )
        let otherRealm = site.with(realm: "Admins", method: .httpBasic)
        #expect(SecretServiceAttributes.networkUser(network([:]), answering: otherRealm) == "nina")
        let anyMethod = site.with(realm: "Staff", method: .default)
        #expect(SecretServiceAttributes.networkUser(network(["authtype": "digest"]), answering: anyMethod) == "nina")
    }

    @Test func aNetworkItemNeverAnswersAnotherOriginOrScheme() {
        let refused: [[String: String]] = [
            network(["server": "intranet.example.evil"]),
            network(["protocol": "http"]),  // an https password is not sent to plain http, nor back
            network(["protocol": ""]),
            ["server": "intranet.example", "user": "nina"],  // no protocol: which origin is unknown
            network(["port": "8443"]),
            network(["user": ""]),
            network(["authtype": "digest"]),  // the space is Basic
        ]
        for attributes in refused {
            #expect(SecretServiceAttributes.networkUser(attributes, answering: site) == nil, "\(attributes)")
        }
        let plain = ProtectionSpace(
            host: "intranet.example",
            port: 80,
            protocol: "http",
            realm: nil,
            authenticationMethod: nil
        )
        #expect(SecretServiceAttributes.networkUser(network([:]), answering: plain) == nil)
        let nonDefaultPort = ProtectionSpace(
            host: "intranet.example",
            port: 8443,
            protocol: "https",
            realm: nil,
            authenticationMethod: nil
        )
        #expect(SecretServiceAttributes.networkUser(network([:]), answering: nonDefaultPort) == nil)
        let proxySpace = ProtectionSpace(
            proxyHost: "intranet.example",
            port: 443,
            type: "https",
            realm: nil,
            authenticationMethod: nil
        )
        #expect(SecretServiceAttributes.networkUser(network([:]), answering: proxySpace) == nil)
        #expect(SecretServiceAttributes.networkQuery(for: proxySpace) == nil)
    }

    @Test func networkItemsAreListedWithTheServerTheyName() throws {
        let listed = try #require(SecretServiceAttributes.networkSpace(network(["port": "8080", "authtype": "ntlm"])))
        #expect(listed.space.host == "intranet.example")
        #expect(listed.space.port == 8080)
        #expect(listed.space.authenticationMethod == .ntlm)
        #expect(listed.user == "nina")
        #expect(try #require(SecretServiceAttributes.networkSpace(network([:]))).space.port == 443)
        #expect(SecretServiceAttributes.networkSpace(network(["protocol": "ftp"])) == nil)  // no port known
    }
}
