import Foundation
import Sesame

// The code samples of Sources/Sesame/Docs.docc, verbatim, so that they compile with the library
// (DocSampleTests checks that every sample in the articles is here). They are never run.
enum DocSamples {
    // HTTP2.md
    static func http2() async throws {
        var configuration = SessionConfiguration.default
        configuration.httpVersion = .http2PriorKnowledge
        let session = Session(configuration: configuration)
        let (_, response) = try await session.data(from: URL(string: "http://127.0.0.1:8080/")!)
        print(response.version)  // "HTTP/2"
    }

    // GettingStarted.md
    static func gettingStarted() async throws {
        let session = Session(configuration: .default)
        let (data, response) = try await session.data(from: URL(string: "https://example.test/")!)
        print(response.status, data.count)

        var configuration = SessionConfiguration.default
        configuration.tls.trustRoots = .anchors(try Certificate.load(contentsOf: "ca.pem"))
        let privateSession = Session(configuration: configuration)

        final class Answers: SessionTaskDelegate {
            func session(
                _ session: Session,
                task: SessionTask,
                didReceive challenge: AuthenticationChallenge
            ) async -> (AuthChallengeDisposition, Credential?) {
                switch challenge.protectionSpace.authenticationMethod {
                case .httpBasic, .httpDigest:
                    guard challenge.previousFailureCount < 2 else { return (.cancelAuthenticationChallenge, nil) }
                    return (.useCredential, Credential(user: "ada", password: "s3cret", persistence: .forSession))
                default:
                    return (.performDefaultHandling, nil)
                }
            }
        }
        let answering = Session(configuration: .default, delegate: Answers())

        struct User: Decodable, Sendable {
            let id: Int
            let name: String
        }
        var serializer = HTTPRequestSerializer()
        serializer.stringEncoding = .gb18030
        let request = try serializer.request(
            method: "POST",
            url: URL(string: "https://example.test/users")!,
            parameters: ["name": "张三", "tags": ["a", "b"]]
        )
        let (user, _) = try await session.data(for: request, serializer: DecodableResponseSerializer(User.self))
        print(user.name)
        _ = (privateSession, answering)
    }

    // ChallengeFlow.md
    static func challengeFlow() {
        var observed = SessionConfiguration.default
        observed.eventObserver = { event in
            if case .challenge(let trace) = event { print("challenge:", trace) }
        }
        _ = observed
    }

    // TrustAndPinning.md
    static func trustAndPinning() throws {
        final class BundledCertificate: SessionTaskDelegate {
            let bundled: Certificate
            init(bundled: Certificate) { self.bundled = bundled }

            func session(
                _ session: Session,
                didReceive challenge: AuthenticationChallenge
            ) async -> (AuthChallengeDisposition, Credential?) {
                guard challenge.protectionSpace.authenticationMethod == .serverTrust,
                    let trust = challenge.protectionSpace.serverTrust
                else { return (.performDefaultHandling, nil) }
                let anchored = trust.settingAnchors([bundled])
                return anchored.evaluate().isTrusted
                    ? (.useCredential, Credential(trust: trust)) : (.cancelAuthenticationChallenge, nil)
            }
        }

        var policy = SecurityPolicy(
            pinningMode: .publicKey,
            pinnedCertificates: try SecurityPolicy.certificates(inDirectory: URL(fileURLWithPath: "pins"))
        )
        policy.validatesDomainName = true
        var pinned = SessionConfiguration.default
        pinned.securityPolicy = policy

        let pins = try PinSet(
            [
                .init(
                    host: "api.example.test",
                    includesSubdomains: true,
                    pins: [
                        "sha256/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=",
                        "sha256/BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB=",
                    ]
                )
            ],
            report: { report in print(report.json) }
        )
        var managed = SessionConfiguration.default
        managed.serverTrustManager = ServerTrustManager(
            evaluators: ["api.example.test": pins, "*.cdn.example.test": DefaultTrustEvaluator()]
        )

        var mutual = SessionConfiguration.default
        mutual.clientIdentities = ["api.example.test": try Identity.load(pkcs12File: "client.p12", password: "secret")]
        _ = (BundledCertificate.self, pinned, managed, mutual)
    }

    // StoringCredentials.md
    static func chooseTheKeyring() throws {
        var configuration = SessionConfiguration.default
        configuration.credentialStorage = CredentialStorage(store: try SecretServiceCredentialStore())
        _ = configuration
    }

    static func credentialStorage() throws {
        let space = ProtectionSpace(
            host: "api.example.test",
            port: 443,
            protocol: "https",
            realm: "API",
            authenticationMethod: .httpBasic
        )
        try CredentialStorage.shared.setDefaultCredential(
            Credential(user: "ada", password: "s3cret", persistence: .permanent),
            for: space
        )
    }

    // README.md
    static func readmeExample() async throws {

        // Trust a private CA, like SecTrustSetAnchorCertificates with a bundled root.
        var configuration = SessionConfiguration.default
        configuration.tls.trustRoots = .anchors(try Certificate.load(contentsOf: "ca.pem"))
        // Or decide yourself, asynchronously, while the handshake waits:
        let bundled = try Certificate.load(contentsOf: "server.cer")
        configuration.handshakeHooks.serverTrust = { request in
            request.peerChain.first.map(bundled.contains) ?? false
        }
        let session = Session(configuration: configuration)
        let (data, response) = try await session.data(from: URL(string: "https://example.test/")!)
        print(response.status, data.count)
    }

    static func readmeChallenges() throws {
        let session = Session(configuration: .default, delegate: Login())
        _ = session
        let space = ProtectionSpace(
            host: "api.example",
            port: 443,
            protocol: "https",
            realm: "API",
            authenticationMethod: .httpBasic
        )
        try CredentialStorage.shared.setDefaultCredential(
            Credential(user: "ada", password: "s3cret", persistence: .permanent),
            for: space
        )
    }
}

// The Features article's "Porting delegate code" (ReadmeExampleTests runs it against a local server).
final class SeedDelegate: SessionTaskDelegate {
    let bundled: [Certificate]
    let identity: Identity
    init(certificateFile: String, pkcs12File: String, password: String) throws {
        bundled = try Certificate.load(contentsOf: certificateFile)
        identity = try Identity.load(pkcs12File: pkcs12File, password: password)
    }

    func session(
        _ session: Session,
        didReceive challenge: AuthenticationChallenge,
        completionHandler: @escaping @Sendable (Session.AuthChallengeDisposition, Credential?) -> Void
    ) {
        let space = challenge.protectionSpace
        if space.authenticationMethod == .serverTrust, let trust = space.serverTrust,
            let leaf = trust.peerChain.first, bundled.contains(leaf)
        {
            completionHandler(.useCredential, Credential(trust: trust))
        } else if space.authenticationMethod == .clientCertificate {
            completionHandler(.useCredential, Credential(identity: identity, persistence: .forSession))
        } else if space.authenticationMethod == .httpBasic, challenge.previousFailureCount == 0 {
            completionHandler(
                .useCredential,
                Credential(user: "ada", password: "s3cret", persistence: .forSession)
            )
        } else {
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    }
}

// README.md's "Answering challenges" (ReadmeExampleTests runs it).
final class Login: SessionTaskDelegate {
    func session(
        _ session: Session,
        didReceive challenge: AuthenticationChallenge,
        completionHandler: @escaping @Sendable (Session.AuthChallengeDisposition, Credential?) -> Void
    ) {
        guard challenge.previousFailureCount == 0 else {
            challenge.sender?.cancel(challenge)
            completionHandler(.cancelAuthenticationChallenge, nil)  // the task fails: authenticationCancelled
            return
        }
        completionHandler(.useCredential, Credential(user: "ada", password: "s3cret", persistence: .forSession))
    }
}
