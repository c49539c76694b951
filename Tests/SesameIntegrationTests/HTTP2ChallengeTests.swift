import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Every challenge over HTTP/2 as over HTTP/1.1: Basic and redirects against nginx's `http2`
/// port, Digest against Apache httpd's mod_http2 (h2c with prior knowledge), a client
/// certificate nginx verifies, and HTTP/2 to an origin through squid's CONNECT tunnel.
@Suite(.serialized) struct HTTP2ChallengeTests {
    static let pki: TestPKI = {
        try! TestPKI()  // safe: nothing can be tested without it
    }()

    final class Answer: SessionTaskDelegate {
        let credential: Credential
        let counts = Recorder<Int>()
        init(_ user: String, _ password: String) {
            credential = Credential(user: user, password: password, persistence: .forSession)
        }
        func session(
            _ session: Session,
            task: SessionTask,
            didReceive challenge: AuthenticationChallenge
        ) async -> (AuthChallengeDisposition, Credential?) {
            if challenge.protectionSpace.authenticationMethod == .serverTrust { return (.performDefaultHandling, nil) }
            counts.append(challenge.previousFailureCount)
            return (.useCredential, credential)
        }
    }

    func session(
        delegate: (any SessionTaskDelegate)? = nil,
        _ adjust: (inout SessionConfiguration) -> Void = { _ in }
    ) -> Session {
        var configuration = SessionConfiguration.default
        configuration.tls.trustRoots = .anchors([Self.pki.root.certificate])
        configuration.credentialStorage = CredentialStorage()
        configuration.cookieStore = nil
        configuration.proxy = .none
        adjust(&configuration)
        return Session(configuration: configuration, delegate: delegate)
    }

    @Test func basicIsAnsweredThenSentPreemptivelyOnTheSameConnection() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let delegate = Answer("test", "123£")
        let session = session(delegate: delegate)
        let base = "https://localhost:\(nginx.http2Port)/basic/"
        let (data, response) = try await session.data(from: URL(string: base + "one")!)
        #expect(response.status == 200)
        #expect(response.version == "HTTP/2")
        #expect(String(decoding: data, as: UTF8.self) == "basic ok user=test")
        let (second, _) = try await session.data(from: URL(string: base + "two")!)
        #expect(String(decoding: second, as: UTF8.self) == "basic ok user=test")
        #expect(delegate.counts.all == [0])
        let log = await nginx.accessLog(atLeast: 3, where: { $0.contains("/basic/") })
        // 401, 200, then 200 at once; all three streams of one HTTP/2 connection.
        #expect(log.count == 3, "\(log)")
        #expect(log.allSatisfy { $0.request.hasSuffix("HTTP/2.0") }, "\(log)")
        #expect(Set(log.map(\.connection)).count == 1, "\(log)")
        // The count the benchmark reads without parsing says the same.
        #expect(nginx.accessLogCount == nginx.accessLog.count)
        #expect(nginx.accessLogCount == 3)
    }

    @Test func aPostIsSentAgainWithItsBodyAfterA401() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let delegate = Answer("user", "passwd")
        var request = HTTPRequest(url: URL(string: "https://localhost:\(nginx.http2Port)/basic/form")!)
        request.method = "POST"
        request.body = .data(Data(repeating: 0x61, count: 200_000))
        let (data, response) = try await session(delegate: delegate).data(for: request)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "basic ok user=user")
        #expect(delegate.counts.all == [0])
    }

    @Test func redirectsAndDecodedBodiesOverHTTP2() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let session = session()
        let base = "https://localhost:\(nginx.http2Port)"
        let (small, redirected) = try await session.data(from: URL(string: base + "/redirect")!)
        #expect(String(decoding: small, as: UTF8.self) == "hello nginx\n")
        #expect(redirected.version == "HTTP/2")
        let (text, response) = try await session.data(from: URL(string: base + "/text.txt")!)
        #expect(response.headers["content-encoding"] == "gzip")
        #expect(String(decoding: text, as: UTF8.self) == NginxServer.text)
        let (large, _) = try await session.data(from: URL(string: base + "/large.bin")!)
        #expect([UInt8](large) == NginxServer.largeFile)
        let (protocolName, _) = try await session.data(from: URL(string: base + "/protocol")!)
        #expect(String(decoding: protocolName, as: UTF8.self) == "HTTP/2.0")
        #expect(session.pool.http2ConnectionCount == 1)
    }

    @Test func digestIsAnsweredAndProvedOverH2C() async throws {
        let apache = try await ApacheServer()
        defer { apache.stop() }
        let delegate = Answer("Mufasa", "Circle Of Life")
        let session = session(delegate: delegate) { $0.httpVersion = .http2PriorKnowledge }
        let url = URL(string: apache.baseURL + "/digest/ok.txt")!
        let (data, response) = try await session.data(from: url)
        #expect(response.status == 200)
        #expect(response.version == "HTTP/2")
        #expect(String(decoding: data, as: UTF8.self) == "digest ok\n")
        #expect(response.headers["Authentication-Info"]?.contains("rspauth=") == true)
        let (_, second) = try await session.data(from: url)
        #expect(second.status == 200)
        #expect(delegate.counts.all == [0], "the second request was preemptive")
        let log = await apache.accessLog(atLeast: 3)
        #expect(
            log == [
                "401 GET /digest/ok.txt HTTP/2.0", "200 GET /digest/ok.txt HTTP/2.0", "200 GET /digest/ok.txt HTTP/2.0",
            ],
            "\(log)"
        )
    }

    @Test func aClientCertificateNginxVerifiesOverHTTP2() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let port = try #require(nginx.trustCasePorts["client-certificate-h2"])
        let identity = try Self.pki.clientCertificate(commonName: "h2-client").identity()
        let (data, response) = try await session { $0.clientIdentities = ["localhost": identity] }
            .data(from: URL(string: "https://localhost:\(port)/")!)
        #expect(response.version == "HTTP/2")
        let body = String(decoding: data, as: UTF8.self)
        #expect(body.contains("CN=h2-client") && body.hasSuffix("verify=SUCCESS HTTP/2.0"), "\(body)")
    }

    @Test func http2ToTheOriginThroughATunnel() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let squid = try await SquidProxy(scheme: .basic)
        defer { squid.stop() }
        let session = session {
            $0.proxy = ProxyConfiguration(proxy: "http://puser:ppass@127.0.0.1:\(squid.port)")
            $0.allowsCleartextPasswords = true
        }
        for _ in 0..<3 {
            let (data, response) = try await session.data(
                from: URL(string: "https://localhost:\(nginx.http2Port)/protocol")!
            )
            #expect(response.version == "HTTP/2")
            #expect(String(decoding: data, as: UTF8.self) == "HTTP/2.0")
        }
        #expect(session.pool.http2ConnectionCount == 1, "one tunnel carries every stream")
    }

    @Test func theCLIShowsTheProtocolAndStreamAndFollowsCurlsVersionFlags() async throws {
        let nginx = try await NginxServer(pki: Self.pki)
        defer { nginx.stop() }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("h2-root-\(UUID().uuidString).pem")
        try Data(Self.pki.root.certificatePEM.utf8).write(to: root)
        defer { try? FileManager.default.removeItem(at: root) }
        let url = "https://localhost:\(nginx.http2Port)/basic/"
        let http2 = try await runSesame(["-v", "--basic", "-u", "user:passwd", "--cacert", root.path, url])
        #expect(http2.status == 0, "\(http2.stderr)")
        #expect(http2.stdout == "basic ok user=user")
        for line in [
            "* ALPN: h2", "* [HTTP/2] [1] OPENED stream for https://localhost:", "> GET /basic/ HTTP/2", "< HTTP/2 200",
        ] {
            #expect(http2.stderr.contains(line), "\(line) in \(http2.stderr)")
        }
        let http1 = try await runSesame(["-v", "--http1.1", "--basic", "-u", "user:passwd", "--cacert", root.path, url])
        #expect(http1.stdout == "basic ok user=user")
        #expect(http1.stderr.contains("> GET /basic/ HTTP/1.1") && !http1.stderr.contains("HTTP/2"), "\(http1.stderr)")

        let nghttpd = try await NghttpdServer(
            files: ["small.txt": Array("hello h2c\n".utf8)],
            trailers: [("x-checksum", "crc32=0042")]
        )
        defer { nghttpd.stop() }
        let h2c = try await runSesame(["-v", "--http2-prior-knowledge", "http://127.0.0.1:\(nghttpd.port)/small.txt"])
        #expect(h2c.stdout == "hello h2c\n", "\(h2c.stderr)")
        #expect(h2c.stderr.contains("< HTTP/2 200"), "\(h2c.stderr)")
        #expect(h2c.stderr.hasSuffix("< x-checksum: crc32=0042\n"), "the trailer after the body: \(h2c.stderr)")
    }
}
