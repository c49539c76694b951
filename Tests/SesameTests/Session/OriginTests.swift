import Foundation
import SesameTesting
import Testing

@testable import Sesame

@Suite struct OriginTests {
    @Test func originsNormalizeSchemeHostAndDefaultPorts() throws {
        let a = try #require(Origin(URL(string: "HTTPS://Example.TEST/path")!))
        #expect(a.scheme == "https")
        #expect(a.host == "example.test")
        #expect(a.port == 443)
        #expect(a.hostHeader == "example.test")
        let b = try #require(Origin(URL(string: "http://example.test:8080/")!))
        #expect(b.hostHeader == "example.test:8080")
        #expect(Origin(URL(string: "ftp://example.test/")!) == nil)
        #expect(Origin(URL(string: "/relative")!) == nil)
    }

    @Test func ipv6LiteralsKeepTheirBracketsOnlyInTheHostHeader() throws {
        let origin = try #require(Origin(URL(string: "http://[::1]:8080/x")!))
        #expect(origin.host == "::1")
        #expect(origin.hostHeader == "[::1]:8080")
    }

    @Test func originsAreEqualBySchemeHostPortAndRoute() throws {
        let url = try #require(Origin(URL(string: "https://example.test:8443/a")!))
        let made = Origin(scheme: "https", host: "example.test", port: 8443)
        #expect(url == made)
        #expect(url.hashValue == made.hashValue)
        #expect(made.hostHeader == "example.test:8443")
        #expect(Origin(scheme: "http", host: "example.test", port: 80).hostHeader == "example.test")
        #expect(Origin(scheme: "https", host: "example.test", port: 80).hostHeader == "example.test:80")
        var proxied = made
        proxied.route = .tunnel(ProxyEndpoint(scheme: "http", host: "proxy.test", port: 3128))
        #expect(proxied != made)
        #expect(Set([made, proxied, url]).count == 2)
    }

    @Test func aSessionReachesAnIPv6Server() async throws {
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.useIPv6 = true
        configuration.handler = { request in .text(request.headers["host"] ?? "") }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let (data, _) = try await testSession().data(from: URL(string: "http://[::1]:\(server.port)/")!)
        #expect(String(decoding: data, as: UTF8.self) == "[::1]:\(server.port)")
    }

    @Test func errorsNeverShowCredentialsFromTheURL() async throws {
        let error = await #expect(throws: SesameError.self) {
            _ = try await testSession().data(from: URL(string: "ftp://user:secret@example.test/")!)
        }
        #expect(error?.code == .unsupportedURL)
        #expect(error?.detail.contains("secret") == false)
    }
}
