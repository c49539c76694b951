import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Client-certificate challenges through sessions: delegates, configured identities, the choice
/// remembered per protection space, and the specific failures.
@Suite struct ClientCertificateSessionTests {
    func mutualTLSServer(
        version: TLSConfiguration.ProtocolVersion? = nil,
        trusting: [Certificate] = [sharedPKI.clientCA.certificate]
    ) throws -> LocalServer {
        var server = LocalServer.Configuration(identity: try sharedPKI.leaf())
        if let version {
            server.minimumVersion = version
            server.maximumVersion = version
        }
        server.clientAuthentication = .required(trusting: trusting)
        return try LocalServer(server)
    }

    func configuration() -> SessionConfiguration {
        var configuration = SessionConfiguration.default
        configuration.tls = trustingTestRoot()
        configuration.credentialStorage = CredentialStorage()
        configuration.proxy = .none
        return configuration
    }

    /// The seeds' `002_*` delegate: one session-level method answers the client-certificate
    /// challenge with a bundled identity and the server-trust challenge by comparing the server's
    /// certificate with a bundled one; anything else is cancelled.
    final class SeedDelegate: SessionTaskDelegate {
        let identity: Identity
        let bundledServerCertificate: Certificate
        let methods = Recorder<AuthenticationMethod>()
        let issuers = Recorder<[DistinguishedName]>()

        init(identity: Identity, bundledServerCertificate: Certificate) {
            self.identity = identity
            self.bundledServerCertificate = bundledServerCertificate
        }

        func session(
            _ session: Session,
            didReceive challenge: AuthenticationChallenge,
            completionHandler: @escaping @Sendable (AuthChallengeDisposition, Credential?) -> Void
        ) {
            let space = challenge.protectionSpace
            methods.append(space.authenticationMethod)
            if space.authenticationMethod == .serverTrust, let trust = space.serverTrust {
                if trust.peerChain.first == bundledServerCertificate {
                    completionHandler(.useCredential, Credential(trust: trust))
                } else {
                    completionHandler(.cancelAuthenticationChallenge, nil)
                }
            } else if space.authenticationMethod == .clientCertificate {
                issuers.append(space.distinguishedNames ?? [])
                completionHandler(.useCredential, Credential(identity: identity, persistence: .forSession))
            } else {
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
        }
    }

    @Test(arguments: [TLSConfiguration.ProtocolVersion.tls12, .tls13])
    func theSeedsFlowAnswersBothChallengesOnOneConnection(version: TLSConfiguration.ProtocolVersion) async throws {
        let leaf = try sharedPKI.leaf()
        var server = LocalServer.Configuration(identity: leaf)
        server.minimumVersion = version
        server.maximumVersion = version
        server.clientAuthentication = .required(trusting: [sharedPKI.clientCA.certificate])
        let tlsServer = try LocalServer(server)
        defer { tlsServer.shutdown() }
        var configuration = configuration()
        configuration.tls.trustRoots = .anchors([])  // only the bundled certificate can make it trusted
        let delegate = SeedDelegate(
            identity: try sharedPKI.clientCertificate(commonName: "seed-client").identity(),
            bundledServerCertificate: leaf.certificate
        )
        let session = Session(configuration: configuration, delegate: delegate)
        let (data, response) = try await session.data(from: URL(string: tlsServer.baseURL + "/")!)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self).contains("CN=seed-client"))
        #expect(delegate.methods.all == [.serverTrust, .clientCertificate])
        #expect(delegate.issuers.all.first == [sharedPKI.clientCA.certificate.subject])
        #expect(tlsServer.connections.count == 1)

        // Another server certificate than the bundled one: the delegate cancels, nothing is sent.
        let other = try mutualTLSServer(version: version)
        defer { other.shutdown() }
        let error = await #expect(throws: SesameError.self) {
            _ = try await session.data(from: URL(string: other.baseURL + "/")!)
        }
        #expect(error?.code == .authenticationCancelled)
        #expect(other.connections.allSatisfy { $0.applicationBytesReceived == 0 })
    }

    final class IdentityDelegate: SessionTaskDelegate {
        let credential: Credential?
        let asked = Recorder<ProtectionSpace>()
        init(_ credential: Credential?) { self.credential = credential }
        func session(
            _ session: Session,
            didReceive challenge: AuthenticationChallenge
        ) async -> (AuthChallengeDisposition, Credential?) {
            guard challenge.protectionSpace.authenticationMethod == .clientCertificate else {
                return (.performDefaultHandling, nil)
            }
            asked.append(challenge.protectionSpace)
            return (.useCredential, credential)
        }
    }

    @Test func theChosenIdentityIsRememberedForTheSession() async throws {
        let tlsServer = try mutualTLSServer()
        defer { tlsServer.shutdown() }
        let identity = try sharedPKI.clientCertificate(commonName: "remembered").identity()
        let delegate = IdentityDelegate(Credential(identity: identity, persistence: .permanent))
        let session = Session(configuration: configuration(), delegate: delegate)
        let url = URL(string: tlsServer.baseURL + "/")!
        _ = try await session.data(from: url)
        session.pool.closeIdleConnections()
        let (data, _) = try await session.data(from: url)
        #expect(String(decoding: data, as: UTF8.self).contains("CN=remembered"))
        #expect(delegate.asked.all.count == 1, "asked once per protection space and session")
        #expect(tlsServer.connections.count == 2)
        // Never on disk: the permanent store of the session holds no identity.
        #expect(try session.configuration.credentialStorage?.allCredentials.isEmpty == true)
    }

    @Test func configuredIdentitiesAnswerWithoutADelegate() async throws {
        let tlsServer = try mutualTLSServer()
        defer { tlsServer.shutdown() }
        var configuration = configuration()
        configuration.clientIdentities = [
            "*.example.test": try sharedPKI.clientCertificate(commonName: "wildcard").identity(),
            "localhost": try sharedPKI.clientCertificate(commonName: "exact").identity(),
        ]
        let (data, _) = try await Session(configuration: configuration).data(from: URL(string: tlsServer.baseURL)!)
        #expect(String(decoding: data, as: UTF8.self).contains("CN=exact"))
        let session = Session(configuration: configuration)
        #expect(
            session.configuredIdentity(forHost: "a.example.test")?.certificate.subject.description.contains("wildcard")
                == true
        )
        #expect(session.configuredIdentity(forHost: "example.test") == nil)
    }

    @Test(arguments: [TLSConfiguration.ProtocolVersion.tls12, .tls13])
    func failuresNameWhatHappened(version: TLSConfiguration.ProtocolVersion) async throws {
        let tlsServer = try mutualTLSServer(version: version)
        defer { tlsServer.shutdown() }
        let url = URL(string: tlsServer.baseURL + "/")!
        let missing = await #expect(throws: SesameError.self) {
            _ = try await Session(configuration: configuration()).data(from: url)
        }
        #expect(missing?.code == .clientCertificateRequired, "\(String(describing: missing))")
        let untrusted = try sharedPKI.clientCertificate(commonName: "rogue", issuer: sharedPKI.untrustedRoot)
        let delegate = IdentityDelegate(Credential(identity: try untrusted.identity(), persistence: .forSession))
        let rejected = await #expect(throws: SesameError.self) {
            _ = try await Session(configuration: configuration(), delegate: delegate).data(from: url)
        }
        #expect(rejected?.code == .clientCertificateRejected, "\(String(describing: rejected))")
    }

    @Test func aPasswordDoesNotAnswerAClientCertificateChallenge() async throws {
        let tlsServer = try mutualTLSServer()
        defer { tlsServer.shutdown() }
        let delegate = IdentityDelegate(Credential(user: "u", password: "p", persistence: .none))
        let error = await #expect(throws: SesameError.self) {
            _ = try await Session(configuration: configuration(), delegate: delegate)
                .data(from: URL(string: tlsServer.baseURL)!)
        }
        #expect(error?.code == .unsupportedCredential)
    }
}
