import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Proxies on loopback: squid with Basic and with Digest-first proxy authentication, plain
/// requests and CONNECT tunnels, with recording origins behind them.
@Suite(.serialized) struct ProxyTests {
    static let pki: TestPKI = {
        try! TestPKI()  // safe: nothing can be tested without it
    }()

    final class Answer: SessionTaskDelegate {
        let credential: Credential?
        let challenges = Recorder<AuthenticationChallenge>()
        init(_ credential: Credential?) { self.credential = credential }
        func session(
            _ session: Session,
            task: SessionTask,
            didReceive challenge: AuthenticationChallenge
        ) async -> (AuthChallengeDisposition, Credential?) {
            // Server trust reaches the task-level method too (Apple's rule): default handling.
            if challenge.protectionSpace.authenticationMethod == .serverTrust { return (.performDefaultHandling, nil) }
            challenges.append(challenge)
            guard let credential else { return (.performDefaultHandling, nil) }
            return (.useCredential, credential)
        }
    }

    func session(
        proxy: String,
        delegate: (any SessionTaskDelegate)? = nil,
        traces: Recorder<ChallengeTrace>? = nil,
        configure: (inout SessionConfiguration) -> Void = { _ in }
    ) -> Session {
        var configuration = SessionConfiguration.default
        configuration.tls.trustRoots = .anchors([Self.pki.root.certificate])
        configuration.credentialStorage = CredentialStorage()
        configuration.proxy = ProxyConfiguration(proxy: proxy)
        if let traces {
            configuration.eventObserver = { event in if case .challenge(let trace) = event { traces.append(trace) } }
        }
        configure(&configuration)
        return Session(configuration: configuration, delegate: delegate)
    }

    func origin(tls: Bool) throws -> LocalServer {
        var configuration = LocalServer.Configuration(identity: tls ? try Self.pki.leaf() : nil)
        configuration.handler = { request in .text("origin saw \(request.method) \(request.target)") }
        return try LocalServer(configuration)
    }

    func withCredentials(_ proxy: SquidProxy, user: String = "puser", password: String = "ppass") -> String {
        "http://\(user):\(password)@127.0.0.1:\(proxy.port)"
    }

    @Test(arguments: [SquidProxy.Scheme.basic, .digestFirst])
    func plainRequestsGoInAbsoluteFormWithProxyCredentials(scheme: SquidProxy.Scheme) async throws {
        let squid = try await SquidProxy(scheme: scheme)
        defer { squid.stop() }
        let origin = try origin(tls: false)
        defer { origin.shutdown() }
        let traces = Recorder<ChallengeTrace>()
        let session = session(proxy: withCredentials(squid), traces: traces)
        let url = "http://127.0.0.1:\(origin.port)/hello"
        let (data, response) = try await session.data(from: URL(string: url)!)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "origin saw GET /hello")
        let (_, again) = try await session.data(from: URL(string: url + "?again")!)
        #expect(again.status == 200)
        #expect(origin.requests.allSatisfy { $0.headers["Proxy-Authorization"] == nil })
        let answered = traces.all.filter { $0.protectionSpace.isProxy && $0.disposition == .useCredential }
        let expected: AuthenticationMethod = scheme == .basic ? .httpBasic : .httpDigest
        #expect(answered.first?.protectionSpace.authenticationMethod == expected, "\(traces.all)")
        #expect(answered.first?.responder == .urlUserInfo)
        #expect(answered.last?.responder == .preemptive, "the second request carries the credential at once")
        // One 407 for two requests.
        #expect(squid.accessLog.filter { $0.contains("/407 ") }.count == 1, "\(squid.accessLog)")
    }

    @Test(arguments: [SquidProxy.Scheme.basic, .digestFirst])
    func httpsGoesThroughATunnelWithTheOriginsTrust(scheme: SquidProxy.Scheme) async throws {
        let squid = try await SquidProxy(scheme: scheme)
        defer { squid.stop() }
        let origin = try origin(tls: true)
        defer { origin.shutdown() }
        let delegate = Answer(Credential(user: "puser", password: "ppass", persistence: .forSession))
        // Basic to a plain proxy needs consent; Digest does not.
        let session = session(proxy: squid.url, delegate: delegate) { $0.allowsCleartextPasswords = scheme == .basic }
        let (data, response) = try await session.data(from: URL(string: "https://localhost:\(origin.port)/secret")!)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "origin saw GET /secret")
        let challenge = try #require(delegate.challenges.all.first)
        #expect(challenge.protectionSpace.isProxy)
        #expect(challenge.protectionSpace.proxyType == "http")
        #expect(challenge.protectionSpace.host == "127.0.0.1")
        #expect(challenge.protectionSpace.port == squid.port)
        #expect(challenge.protectionSpace.realm == SquidProxy.realm)
        #expect(challenge.protectionSpace.authenticationMethod == (scheme == .basic ? .httpBasic : .httpDigest))
        #expect(origin.connections.first?.serverName == "localhost", "SNI is the origin's, not the proxy's")
        #expect(origin.requests.allSatisfy { $0.headers["Proxy-Authorization"] == nil })
        // A second connection through the proxy sends the credential with its CONNECT at once.
        session.pool.closeIdleConnections()
        _ = try await session.data(from: URL(string: "https://localhost:\(origin.port)/again")!)
        #expect(delegate.challenges.all.count == 1)
    }

    @Test func negotiateAnswersSquidForPlainRequestsAndTunnels() async throws {
        let realm = try await KerberosRealm.shared()
        let squid = try await SquidProxy(scheme: .negotiate(realm))
        defer { squid.stop() }
        let plainOrigin = try origin(tls: false)
        defer { plainOrigin.shutdown() }
        let tlsOrigin = try origin(tls: true)
        defer { tlsOrigin.shutdown() }
        let password = KerberosRealm.users["alice"]!
        let delegate = Answer(Credential(user: "alice", password: password, persistence: .forSession))
        // The proxy's principal is HTTP/localhost: it is reached by that name.
        let session = session(proxy: "http://localhost:\(squid.port)", delegate: delegate)
        let (data, response) = try await session.data(from: URL(string: "http://127.0.0.1:\(plainOrigin.port)/hello")!)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "origin saw GET /hello")
        let (secret, tunneled) = try await session.data(
            from: URL(string: "https://localhost:\(tlsOrigin.port)/secret")!
        )
        #expect(tunneled.status == 200)
        #expect(String(decoding: secret, as: UTF8.self) == "origin saw GET /secret")
        let methods = delegate.challenges.all.map(\.protectionSpace.authenticationMethod)
        #expect(!methods.isEmpty && methods.allSatisfy { $0 == .negotiate }, "\(methods)")
        #expect(delegate.challenges.all.allSatisfy { $0.protectionSpace.isProxy })
        // squid logs a CONNECT when its tunnel closes; the plain request's line is there now.
        #expect(squid.accessLog.contains { $0.contains("alice@\(KerberosRealm.name)") && $0.contains("GET http://") })
        #expect(plainOrigin.requests.allSatisfy { $0.headers["Proxy-Authorization"] == nil })
        #expect(!password.isEmpty && !squid.accessLog.joined().contains(password))
    }

    /// A proxy that takes NTLM for CONNECT and binds the exchange to its connection, as
    /// corporate proxies do: the AUTHENTICATE must come on the connection its CHALLENGE went out on.
    @Test func ntlmToAConnectProxyKeepsItsConnection() async throws {
        let origin = try origin(tls: true)
        defer { origin.shutdown() }
        var challenge = NTLMMessage.signature
        challenge.appendLE32(2)
        challenge += [0, 0, 0, 0, 48, 0, 0, 0]
        challenge.appendLE32(0xE208_8205)  // Unicode, NTLM, extended session security, no target info
        challenge += [1, 2, 3, 4, 5, 6, 7, 8] + [UInt8](repeating: 0, count: 8)
        let type2 = "NTLM " + Data(challenge).base64EncodedString()
        let challengedOn = LockedValue<Int?>(nil)
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { request in
            let offered = request.headers["proxy-authorization"] ?? ""
            let message = Data(base64Encoded: String(offered.dropFirst(5))).map(Array.init) ?? []
            switch message.count > 8 ? message[8] : 0 {
            case 1:
                challengedOn.withLock { $0 = request.connectionIndex }
                return .text("", status: 407, headers: [("Proxy-Authenticate", type2)])
            case 3 where challengedOn.withLock({ $0 }) == request.connectionIndex:
                return .tunnel(toPort: origin.port)
            default:
                return .text("", status: 407, headers: [("Proxy-Authenticate", "NTLM")])
            }
        }
        let proxy = try LocalServer(configuration)
        defer { proxy.shutdown() }
        let delegate = Answer(Credential(user: "CORP\\ada", password: "s3cret", persistence: .forSession))
        let session = session(proxy: "http://127.0.0.1:\(proxy.port)", delegate: delegate) {
            $0.allowsCleartextPasswords = true
        }
        let (data, response) = try await session.data(from: URL(string: "https://localhost:\(origin.port)/secret")!)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "origin saw GET /secret")
        #expect(delegate.challenges.all.map(\.protectionSpace.authenticationMethod) == [.ntlm])
        // Three CONNECTs: none, NEGOTIATE, AUTHENTICATE; the last two on one connection.
        let connects = proxy.requests.filter { $0.method == "CONNECT" }
        #expect(connects.count == 3)
        #expect(connects.count == 3 && connects[1].connectionIndex == connects[2].connectionIndex)
    }

    @Test func wrongProxyPasswordsAreBounded() async throws {
        let squid = try await SquidProxy(scheme: .basic)
        defer { squid.stop() }
        let plainOrigin = try origin(tls: false)
        defer { plainOrigin.shutdown() }
        let tlsOrigin = try origin(tls: true)
        defer { tlsOrigin.shutdown() }
        let delegate = Answer(Credential(user: "puser", password: "wrong", persistence: .forSession))
        let session = session(proxy: squid.url, delegate: delegate) { $0.allowsCleartextPasswords = true }
        let (_, response) = try await session.data(from: URL(string: "http://127.0.0.1:\(plainOrigin.port)/")!)
        #expect(response.status == 407)
        #expect(delegate.challenges.all.map(\.previousFailureCount) == [0, 1, 2])
        let error = await #expect(throws: SesameError.self) {
            _ = try await session.data(from: URL(string: "https://localhost:\(tlsOrigin.port)/")!)
        }
        #expect(error?.code == .proxyAuthenticationFailed)
        #expect(plainOrigin.requests.isEmpty && tlsOrigin.requests.isEmpty)
    }

    @Test func basicToAPlainProxyNeedsConsent() async throws {
        let squid = try await SquidProxy(scheme: .basic)
        defer { squid.stop() }
        let origin = try origin(tls: false)
        defer { origin.shutdown() }
        let delegate = Answer(Credential(user: "puser", password: "ppass", persistence: .forSession))
        let session = session(proxy: squid.url, delegate: delegate)
        let error = await #expect(throws: SesameError.self) {
            _ = try await session.data(from: URL(string: "http://127.0.0.1:\(origin.port)/")!)
        }
        #expect(error?.code == .cleartextCredentialRefused)
    }

    @Test func originBasicAndAClientCertificateThroughTheTunnel() async throws {
        let squid = try await SquidProxy(scheme: .digestFirst)
        defer { squid.stop() }
        var configuration = LocalServer.Configuration(identity: try Self.pki.leaf())
        configuration.clientAuthentication = .required(trusting: [Self.pki.clientCA.certificate])
        let gate = BasicAuthGate(realm: "origin", users: ["user": "passwd"])
        configuration.handler = { request in
            gate.check(request) ?? .text("client \(request.clientCertificateSubject ?? "none")")
        }
        let origin = try LocalServer(configuration)
        defer { origin.shutdown() }
        let identity = try Self.pki.clientCertificate().identity()
        let session = session(proxy: withCredentials(squid)) { $0.clientIdentities = ["localhost": identity] }
        let url = URL(string: "https://user:passwd@localhost:\(origin.port)/private")!
        let (data, response) = try await session.data(from: url)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self).contains("CN=sesame-client"))
        let authorized = origin.requests.filter { $0.headers["Authorization"] != nil }
        #expect(!authorized.isEmpty)
        #expect(origin.requests.allSatisfy { $0.headers["Proxy-Authorization"] == nil })
    }

    @Test func connectCarriesNoOriginCredentialsAndThe407LoopIsBounded() async throws {
        // A scripted "proxy" that records every CONNECT and always answers 407.
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { _ in
            .text("no", status: 407, headers: [("Proxy-Authenticate", "Basic realm=\"scripted\"")])
        }
        let proxy = try LocalServer(configuration)
        defer { proxy.shutdown() }
        let delegate = Answer(Credential(user: "p", password: "q", persistence: .forSession))
        let session = session(proxy: "http://127.0.0.1:\(proxy.port)", delegate: delegate) {
            $0.allowsCleartextPasswords = true
        }
        var request = HTTPRequest(url: URL(string: "https://user:pw@origin.test:8443/")!)
        request.headers.add(name: "Authorization", value: "Bearer origin-token")
        request.headers.add(name: "Cookie", value: "origin=1")
        let error = await #expect(throws: SesameError.self) { _ = try await session.data(for: request) }
        #expect(error?.code == .proxyAuthenticationFailed)
        let connects = proxy.requests
        #expect(connects.count == 4, "one without credentials, then three refused attempts")
        for connect in connects {
            #expect(connect.method == "CONNECT")
            #expect(connect.target == "origin.test:8443")
            #expect(connect.headers["Authorization"] == nil)
            #expect(connect.headers["Cookie"] == nil)
        }
        #expect(connects.dropFirst().allSatisfy { $0.headers["Proxy-Authorization"] == "Basic cDpx" })
    }

    @Test func noProxyHostsAreReachedDirectly() async throws {
        let origin = try origin(tls: false)
        defer { origin.shutdown() }
        // The proxy port is closed: a request that went there would fail.
        let closed = LoopbackPort.unused()
        let session = session(proxy: "http://127.0.0.1:\(closed)") {
            $0.proxy.noProxy = NoProxyList("127.0.0.0/8")
        }
        let (_, response) = try await session.data(from: URL(string: "http://127.0.0.1:\(origin.port)/direct")!)
        #expect(response.status == 200)
        #expect(origin.requests.first?.target == "/direct")
    }

    @Test func theCommandLineTalksToSquid() async throws {
        let squid = try await SquidProxy(scheme: .digestFirst)
        defer { squid.stop() }
        let plain = try origin(tls: false)
        defer { plain.shutdown() }
        let secure = try origin(tls: true)
        defer { secure.shutdown() }
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("proxy-root-\(UUID().uuidString).pem")
        try Data(Self.pki.root.certificatePEM.utf8).write(to: root)
        let plainURL = "http://127.0.0.1:\(plain.port)/cli"
        let secureURL = "https://localhost:\(secure.port)/cli"

        let viaProxy = try await runSesame(["-v", "-x", squid.url, "-U", "puser:ppass", plainURL])
        #expect(viaProxy.status == 0, "\(viaProxy.stderr)")
        #expect(viaProxy.stdout == "origin saw GET /cli")
        #expect(viaProxy.stderr.contains("> GET http://127.0.0.1:\(plain.port)/cli HTTP/1.1"), "\(viaProxy.stderr)")
        #expect(viaProxy.stderr.contains("Digest"), "Digest is offered first and is the stronger scheme")

        let tunnel = try await runSesame(["-v", "--cacert", root.path, "-x", squid.url, "-U", "puser:ppass", secureURL])
        #expect(tunnel.status == 0, "\(tunnel.stderr)")
        #expect(tunnel.stderr.contains("* CONNECT localhost:\(secure.port) via"), "\(tunnel.stderr)")

        let basicOnly = try await runSesame(["-v", "-x", squid.url, "-U", "puser:ppass", "--proxy-basic", plainURL])
        #expect(basicOnly.status == 0, "\(basicOnly.stderr)")
        #expect(basicOnly.stderr.contains("Proxy-Authorization: Basic"), "\(basicOnly.stderr)")

        let wrongPlain = try await runSesame(["-x", squid.url, "-U", "puser:wrong", plainURL])
        #expect(wrongPlain.status == 7, "\(wrongPlain.stderr)")
        let wrongTunnel = try await runSesame(["--cacert", root.path, "-x", squid.url, "-U", "puser:wrong", secureURL])
        #expect(wrongTunnel.status == 7, "\(wrongTunnel.stderr)")
        let noCredentials = try await runSesame(["-x", squid.url, plainURL])
        #expect(noCredentials.status == 7, "\(noCredentials.stderr)")
        #expect(noCredentials.stderr.contains("-U"), "\(noCredentials.stderr)")

        // The environment's proxy, and --noproxy / -x '' to get around it.
        let environment = ["http_proxy": "http://puser:ppass@127.0.0.1:\(squid.port)"]
        let fromEnvironment = try await runSesame([plainURL], environment: environment)
        #expect(fromEnvironment.status == 0, "\(fromEnvironment.stderr)")
        let bypassed = try await runSesame(
            ["--noproxy", "127.0.0.1", plainURL + "-bypassed"],
            environment: environment
        )
        #expect(bypassed.status == 0, "\(bypassed.stderr)")
        let off = try await runSesame(["-x", "", plainURL + "-off"], environment: environment)
        #expect(off.status == 0, "\(off.stderr)")
        // One more request through squid: once squid logged it, it had logged any request that
        // ended before it, so neither of the two above went through it.
        let marker = try await runSesame([plainURL + "-marker"], environment: environment)
        #expect(marker.status == 0, "\(marker.stderr)")
        #expect(await eventually(within: .seconds(30)) { squid.accessLog.contains { $0.contains("/cli-marker") } })
        let log = squid.accessLog
        #expect(!log.contains { $0.contains("/cli-bypassed") || $0.contains("/cli-off") }, "\(log)")
        #expect(plain.requests.allSatisfy { $0.headers["Proxy-Authorization"] == nil })
    }

    @Test func anHTTPSProxyIsReachedOverTLSWithItsOwnTrustAndTunnelsTLSInsideTLS() async throws {
        let origin = try origin(tls: true)
        defer { origin.shutdown() }
        // A scripted proxy over TLS: plain requests are answered by the proxy itself (showing what
        // it received); CONNECT requests are tunnelled to the origin.
        var configuration = LocalServer.Configuration(identity: try Self.pki.leaf())
        let gate = "Basic cDpx"  // p:q
        let originPort = origin.port
        configuration.handler = { request in
            guard request.headers["Proxy-Authorization"] == gate else {
                return .text("auth", status: 407, headers: [("Proxy-Authenticate", "Basic realm=\"tls-proxy\"")])
            }
            if request.method == "CONNECT" { return .tunnel(toPort: originPort) }
            return .text("proxied \(request.method) \(request.target)")
        }
        let proxy = try LocalServer(configuration)
        defer { proxy.shutdown() }
        let delegate = Answer(Credential(user: "p", password: "q", persistence: .forSession))
        let session = session(proxy: "https://localhost:\(proxy.port)", delegate: delegate)
        let (data, response) = try await session.data(from: URL(string: "http://origin.test:8080/x?y=1")!)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "proxied GET http://origin.test:8080/x?y=1")
        let space = try #require(delegate.challenges.all.first?.protectionSpace)
        #expect(space.proxyType == "https")
        #expect(space.receivesCredentialSecurely, "Basic to an HTTPS proxy needs no cleartext consent")

        for path in ["/inner", "/inner-again"] {
            let (body, tunnelled) = try await session.data(from: URL(string: "https://localhost:\(originPort)\(path)")!)
            #expect(tunnelled.status == 200)
            #expect(String(decoding: body, as: UTF8.self) == "origin saw GET \(path)")
        }
        #expect(origin.connections.count == 1, "the nested connection is kept alive and reused")
        #expect(origin.connections.first?.serverName == "localhost")
        #expect(origin.requests.allSatisfy { $0.headers["Proxy-Authorization"] == nil })
        #expect(proxy.requests.filter { $0.method == "CONNECT" }.count == 1)
    }

    /// TLS inside TLS carries large bodies both ways intact: the origin's records are the proxy
    /// session's data, each bounded by its engine's 64 KiB buffer, with no relay between them.
    @Test func largeBodiesCrossATLSInsideTLSTunnelIntactBothWays() async throws {
        let download = (0..<(1 << 19)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 13) }
        var originConfiguration = LocalServer.Configuration(identity: try Self.pki.leaf())
        originConfiguration.handler = { request in
            request.method == "POST" ? .bytes(request.body) : .bytes(download)  // an upload comes back
        }
        let origin = try LocalServer(originConfiguration)
        defer { origin.shutdown() }
        var proxyConfiguration = LocalServer.Configuration(identity: try Self.pki.leaf())
        let originPort = origin.port
        proxyConfiguration.handler = { request in
            request.method == "CONNECT" ? .tunnel(toPort: originPort) : .text("no", status: 403)
        }
        let proxy = try LocalServer(proxyConfiguration)
        defer { proxy.shutdown() }
        let session = session(proxy: "https://localhost:\(proxy.port)")

        let (body, response) = try await session.data(from: URL(string: "https://localhost:\(originPort)/big")!)
        #expect(response.status == 200)
        #expect(body == Data(download))

        let upload = Data((0..<(1 << 18)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ ($0 >> 11)) })
        var request = HTTPRequest(url: URL(string: "https://localhost:\(originPort)/up")!, method: "POST")
        request.headers.replaceOrAdd(name: "Content-Type", value: "application/octet-stream")
        let (echoed, _) = try await session.upload(for: request, from: upload)
        #expect(echoed == upload)
        #expect(origin.connections.count == 1, "both exchanges used the one tunnel")
    }
}
