import Foundation
import Testing

@testable import Sesame

@Suite struct ProxyConfigurationTests {
    @Test func noProxyFollowsCurl() {
        let list = NoProxyList(
            "example.com, .internal.test,10.0.0.0/8, ::1, [fd00::5]:8080, 192.168.1.7:3128, host.local."
        )
        #expect(list.matches(host: "example.com"))
        #expect(list.matches(host: "WWW.Example.COM"))
        #expect(list.matches(host: "example.com."))
        #expect(!list.matches(host: "badexample.com"))
        #expect(list.matches(host: "a.internal.test"))
        #expect(list.matches(host: "internal.test"))
        #expect(list.matches(host: "10.200.3.4"))
        #expect(!list.matches(host: "11.0.0.1"))
        #expect(list.matches(host: "::1"))
        #expect(list.matches(host: "[::1]"))
        #expect(list.matches(host: "fd00::5"))
        #expect(list.matches(host: "192.168.1.7"))
        #expect(list.matches(host: "host.local"))
        #expect(!list.matches(host: "127.0.0.1"))  // curl does not exempt loopback on its own
        #expect(NoProxyList("*").matches(host: "anything.example"))
        #expect(!NoProxyList("").matches(host: "example.com"))
        #expect(NoProxyList("2001:db8::/32").matches(host: "2001:db8:1::9"))
        #expect(!NoProxyList("2001:db8::/32").matches(host: "2001:db9::1"))
        #expect(!NoProxyList("10.0.0.0/99").matches(host: "10.0.0.1"))
    }

    @Test func theEnvironmentIsReadAsCurlReadsIt() throws {
        let lower = ProxyConfiguration.environment([
            "http_proxy": "proxy.test:3128", "HTTPS_PROXY": "http://secure.test:8080", "no_proxy": "skip.test",
        ])
        #expect(lower.httpProxy == "proxy.test:3128")
        #expect(lower.httpsProxy == "http://secure.test:8080")
        // HTTP_PROXY in upper case is ignored (httpoxy); all_proxy fills in.
        let upper = ProxyConfiguration.environment(["HTTP_PROXY": "evil.test", "ALL_PROXY": "all.test:1"])
        #expect(upper.httpProxy == "all.test:1")
        #expect(upper.httpsProxy == "all.test:1")
        #expect(ProxyConfiguration.environment([:]) == .none)

        let (route, _) = try lower.route(for: URL(string: "http://origin.test/x")!)  // safe: literal
        #expect(route == .forward(ProxyEndpoint(scheme: "http", host: "proxy.test", port: 3128)))
        let (tunnel, _) = try lower.route(for: URL(string: "https://origin.test/x")!)  // safe: literal
        #expect(tunnel == .tunnel(ProxyEndpoint(scheme: "http", host: "secure.test", port: 8080)))
        let (direct, _) = try lower.route(for: URL(string: "https://skip.test/")!)  // safe: literal
        #expect(direct == .direct)
    }

    @Test func proxyURLsParseWithCurlsDefaultsAndCredentials() throws {
        let (plain, none) = try ProxyEndpoint.parse("proxy.test")
        #expect(plain == ProxyEndpoint(scheme: "http", host: "proxy.test", port: 1080))
        #expect(none == nil)
        let (secure, credential) = try ProxyEndpoint.parse("https://us%40er:p%3Ass@[::1]")
        #expect(secure == ProxyEndpoint(scheme: "https", host: "::1", port: 443))
        #expect(credential?.user == "us@er")
        #expect(credential?.password == "p:ss")
        for bad in ["socks5://proxy.test:1080", "http://", "http://proxy.test:3128/path", "http://proxy.test:99999"] {
            #expect(throws: SesameError.self, "\(bad)") { try ProxyEndpoint.parse(bad) }
        }
        let error = #expect(throws: SesameError.self) { try ProxyEndpoint.parse("http://user:secret@proxy.test/x") }
        #expect(error?.detail.contains("secret") == false)
    }

    @Test func aBadProxySettingFailsEachRequestItWouldRouteAndNoOther() async throws {
        // The session parses its proxies once; a bad one is still reported by the requests it
        // would carry, and hosts in no_proxy still go direct.
        let configuration = ProxyConfiguration(proxy: "socks5://proxy.test:1080", noProxy: NoProxyList("skip.test"))
        let router = ProxyRouter(configuration)
        let error = #expect(throws: SesameError.self) {
            try router.route(for: URL(string: "http://origin.test/")!)  // safe: literal
        }
        #expect(error?.code == .invalidArgument)
        #expect(error?.detail.contains("socks5") == true)
        let (direct, _) = try router.route(for: URL(string: "https://skip.test/")!)  // safe: literal
        #expect(direct == .direct)
        var sessionConfiguration = SessionConfiguration()
        sessionConfiguration.proxy = configuration
        let session = Session(configuration: sessionConfiguration)
        let failed = await #expect(throws: SesameError.self) {
            _ = try await session.data(from: URL(string: "http://origin.test/")!)  // safe: literal
        }
        #expect(failed?.code == .invalidArgument)
    }

    @Test func aSessionRoutesByOriginAsByURL() throws {
        var configuration = ProxyConfiguration(proxy: "http://u:p@proxy.test:3128")
        configuration.noProxy = NoProxyList("internal.test, ::1, 10.0.0.0/8")
        let router = ProxyRouter(configuration)
        for text in [
            "http://example.com/", "https://WWW.Example.COM:8443/a", "http://a.internal.test/",
            "https://[::1]:8443/", "http://10.1.2.3/", "http://h%C3%A9.test/",
        ] {
            let url = try #require(URL(string: text))
            let byURL = try router.route(for: url)
            let byOrigin = try router.route(for: try #require(Origin(url)))
            #expect(byURL.route == byOrigin.route, "\(text)")
            #expect(byURL.credential?.user == byOrigin.credential?.user, "\(text)")
        }
    }
}
