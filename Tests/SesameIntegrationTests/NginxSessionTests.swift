import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Sessions against nginx on loopback: the server most users meet.
@Suite(.serialized) struct NginxSessionTests {
    static let pki: TestPKI = {
        try! TestPKI()  // safe: nothing can be tested without it
    }()

    func session(_ adjust: (inout SessionConfiguration) -> Void = { _ in }) -> Session {
        var configuration = SessionConfiguration.default
        configuration.tls.trustRoots = .anchors([Self.pki.root.certificate])
        adjust(&configuration)
        return Session(configuration: configuration)
    }

    @Test func keepAliveReusesOneConnectionForHTTPAndHTTPS() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let session = session()
        for port in [nginx.httpPort, nginx.httpsPort] {
            let scheme = port == nginx.httpPort ? "http" : "https"
            for _ in 0..<5 {
                let (data, response) = try await session.data(
                    from: URL(string: "\(scheme)://localhost:\(port)/small.txt")!
                )
                #expect(response.status == 200)
                #expect(String(decoding: data, as: UTF8.self) == "hello nginx\n")
            }
        }
        let log = await nginx.accessLog(atLeast: 10)
        #expect(log.count == 10)
        #expect(Set(log.map(\.connection)).count == 2, "\(log)")
        #expect(log.map(\.number) == [1, 2, 3, 4, 5, 1, 2, 3, 4, 5])
    }

    @Test func largeBodiesAndGzipChunkedBodies() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let session = session()
        let (large, _) = try await session.data(from: URL(string: "https://localhost:\(nginx.httpsPort)/large.bin")!)
        #expect([UInt8](large) == NginxServer.largeFile)
        let (text, response) = try await session.data(from: URL(string: "http://localhost:\(nginx.httpPort)/text.txt")!)
        #expect(response.headers["content-encoding"] == "gzip")
        #expect(response.headers["transfer-encoding"] == "chunked")
        #expect(String(decoding: text, as: UTF8.self) == NginxServer.text)
    }

    @Test func redirectsFollowAndStripCredentialsAcrossOrigins() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let session = session()
        let (small, _) = try await session.data(from: URL(string: "http://localhost:\(nginx.httpPort)/redirect")!)
        #expect(String(decoding: small, as: UTF8.self) == "hello nginx\n")

        var request = HTTPRequest(url: URL(string: "https://localhost:\(nginx.httpsPort)/to-other-port")!)
        request.headers.add(name: "Authorization", value: "Basic dXNlcjpwYXNz")
        request.headers.add(name: "Cookie", value: "id=1")
        let (echo, _) = try await session.data(for: request)
        #expect(String(decoding: echo, as: UTF8.self) == "auth= cookie=")

        var sameOrigin = HTTPRequest(url: URL(string: "http://localhost:\(nginx.httpPort)/echo")!)
        sameOrigin.headers.add(name: "Authorization", value: "Basic dXNlcjpwYXNz")
        let (kept, _) = try await session.data(for: sameOrigin)
        #expect(String(decoding: kept, as: UTF8.self) == "auth=Basic dXNlcjpwYXNz cookie=")
    }

    @Test func timeoutsAndCancellationAgainstARealServer() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let session = session { $0.maximumConnectionsPerHost = 1 }
        let task = Task { try await session.data(from: URL(string: "https://localhost:\(nginx.httpsPort)/large.bin")!) }
        task.cancel()
        _ = try? await task.value
        let (data, _) = try await session.data(from: URL(string: "https://localhost:\(nginx.httpsPort)/small.txt")!)
        #expect(String(decoding: data, as: UTF8.self) == "hello nginx\n")
        let (_, missing) = try await session.data(from: URL(string: "http://localhost:\(nginx.httpPort)/missing-page")!)
        #expect(missing.status == 404)
    }
}
