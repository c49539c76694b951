import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Which delegate method answers each kind of challenge, for every combination of what one
/// delegate implements and where it sits (the task's own delegate, or the session's), against real
/// servers: a 401 origin, a 407 forwarding proxy, a TLS server, and a server that requires a
/// client certificate. Each row is the method Apple's rule calls (ChallengeFlow.md).
@Suite struct DelegateRoutingTableTests {
    enum Implements: String, CaseIterable, Sendable {
        case sessionLevelOnly, taskLevelOnly, both, neither
    }

    enum Place: String, CaseIterable, Sendable {
        case taskDelegate, sessionDelegate
    }

    enum Kind: String, CaseIterable, Sendable {
        case origin401, proxy407, serverTrust, clientCertificate
    }

    /// What every probe answers: the right credential for the challenge, and a record of the call.
    final class Calls: Sendable {
        let made = Recorder<String>()
        let identity: Identity

        init() throws { identity = try sharedPKI.clientCertificate(commonName: "routing").identity() }

        func answer(_ challenge: AuthenticationChallenge, method: String) -> (AuthChallengeDisposition, Credential?) {
            let space = challenge.protectionSpace
            made.append("\(space.authenticationMethod): \(method)")
            switch space.authenticationMethod {
            case .serverTrust: return (.useCredential, space.serverTrust.map { Credential(trust: $0) })
            case .clientCertificate: return (.useCredential, Credential(identity: identity, persistence: .forSession))
            default: return (.useCredential, Credential(user: "ada", password: "s3cret", persistence: .forSession))
            }
        }
    }

    final class SessionLevelOnly: SessionTaskDelegate {
        let calls: Calls
        init(_ calls: Calls) { self.calls = calls }
        func session(
            _ session: Session,
            didReceive challenge: AuthenticationChallenge
        ) async -> (AuthChallengeDisposition, Credential?) { calls.answer(challenge, method: "session level") }
    }

    final class TaskLevelOnly: SessionTaskDelegate {
        let calls: Calls
        init(_ calls: Calls) { self.calls = calls }
        func session(
            _ session: Session,
            task: SessionTask,
            didReceive challenge: AuthenticationChallenge,
            completionHandler: @escaping @Sendable (AuthChallengeDisposition, Credential?) -> Void
        ) {
            let (disposition, credential) = calls.answer(challenge, method: "task level")
            completionHandler(disposition, credential)
        }
    }

    final class Both: SessionTaskDelegate {
        let calls: Calls
        init(_ calls: Calls) { self.calls = calls }
        func session(
            _ session: Session,
            didReceive challenge: AuthenticationChallenge
        ) async -> (AuthChallengeDisposition, Credential?) { calls.answer(challenge, method: "session level") }
        func session(
            _ session: Session,
            task: SessionTask,
            didReceive challenge: AuthenticationChallenge
        ) async -> (AuthChallengeDisposition, Credential?) { calls.answer(challenge, method: "task level") }
    }

    final class Neither: SessionTaskDelegate {}

    static func delegate(_ implements: Implements, _ calls: Calls) -> any SessionTaskDelegate {
        switch implements {
        case .sessionLevelOnly: SessionLevelOnly(calls)
        case .taskLevelOnly: TaskLevelOnly(calls)
        case .both: Both(calls)
        case .neither: Neither()
        }
    }

    /// The rule: HTTP challenges go to the task-level method (the task's delegate, then the
    /// session's), else to the session delegate's session-level method; connection-level ones to
    /// the session delegate's session-level method, else to the task-level method. A task
    /// delegate's session-level method is never asked.
    static func expected(_ implements: Implements, _ place: Place, _ kind: Kind) -> String? {
        let connectionLevel = kind == .serverTrust || kind == .clientCertificate
        let hasTask = implements == .taskLevelOnly || implements == .both
        let hasSession = implements == .sessionLevelOnly || implements == .both
        switch place {
        case .taskDelegate:
            return hasTask ? "task level" : nil
        case .sessionDelegate:
            if connectionLevel { return hasSession ? "session level" : hasTask ? "task level" : nil }
            return hasTask ? "task level" : hasSession ? "session level" : nil
        }
    }

    static let methodOfKind: [Kind: AuthenticationMethod] = [
        .origin401: .httpBasic, .proxy407: .httpBasic, .serverTrust: .serverTrust,
        .clientCertificate: .clientCertificate,
    ]

    @Test(arguments: Implements.allCases, Place.allCases)
    func theRuleChoosesTheMethod(implements: Implements, place: Place) async throws {
        for kind in Kind.allCases {
            try await check(implements, place, kind)
        }
    }

    func check(_ implements: Implements, _ place: Place, _ kind: Kind) async throws {
        let calls = try Calls()
        let traces = Recorder<ChallengeTrace>()
        let gate = BasicAuthGate(realm: "routing", users: ["ada": "s3cret"])
        let target: LocalServer
        var configuration = SessionConfiguration.default
        configuration.tls = trustingTestRoot()
        configuration.credentialStorage = CredentialStorage()
        configuration.allowsCleartextPasswords = true
        configuration.eventObserver = { event in
            if case .challenge(let trace) = event { traces.append(trace) }
        }
        let requestURL: URL
        switch kind {
        case .origin401:
            target = try server { request in gate.check(request) ?? .text("in") }
            requestURL = url(target, "/")
        case .proxy407:
            target = try server { request in
                request.headers["Proxy-Authorization"] == "Basic YWRhOnMzY3JldA=="
                    ? .text("through")
                    : .text("no", status: 407, headers: [("Proxy-Authenticate", "Basic realm=\"proxy\"")])
            }
            configuration.proxy = ProxyConfiguration(proxy: "http://localhost:\(target.port)")
            requestURL = URL(string: "http://origin.invalid/")!
        case .serverTrust:
            target = try server(tls: true) { _ in .text("trusted") }
            requestURL = url(target, "/")
        case .clientCertificate:
            var server = LocalServer.Configuration(identity: try sharedPKI.leaf())
            server.clientAuthentication = .required(trusting: [sharedPKI.clientCA.certificate])
            server.handler = { _ in .text("certified") }
            target = try LocalServer(server)
            requestURL = url(target, "/")
        }
        defer { target.shutdown() }
        let delegate = Self.delegate(implements, calls)
        let session = Session(configuration: configuration, delegate: place == .sessionDelegate ? delegate : nil)
        let outcome: Result<HTTPResponse, any Error>
        do {
            outcome = .success(
                try await session.data(from: requestURL, delegate: place == .taskDelegate ? delegate : nil).1
            )
        } catch {
            outcome = .failure(error)
        }
        let method = Self.methodOfKind[kind]!
        let made = calls.made.all.filter { $0.hasPrefix("\(method):") }
        let row = "\(implements) \(place) \(kind)"
        guard let expected = Self.expected(implements, place, kind) else {
            #expect(made.isEmpty, "\(row): \(made)")
            let trace = traces.all.first { $0.protectionSpace.authenticationMethod == method }
            #expect(trace == nil || trace?.responder == .defaultHandling, "\(row): \(String(describing: trace))")
            switch (kind, outcome) {
            case (.origin401, .success(let response)): #expect(response.status == 401, "\(row)")
            case (.proxy407, .success(let response)): #expect(response.status == 407, "\(row)")
            case (.serverTrust, .success(let response)): #expect(response.status == 200, "\(row)")
            case (.clientCertificate, .failure(let error)):
                #expect((error as? SesameError)?.code == .clientCertificateRequired, "\(row): \(error)")
            default: Issue.record("\(row): \(outcome)")
            }
            return
        }
        // The one method the rule names answered, once, and the trace says so.
        #expect(made == ["\(method): \(expected)"], "\(row)")
        let trace = traces.all.first { $0.protectionSpace.authenticationMethod == method }
        #expect(trace?.responder == (place == .taskDelegate ? .taskDelegate : .sessionDelegate), "\(row)")
        #expect(trace?.delegateMethod == (expected == "task level" ? .taskLevel : .sessionLevel), "\(row)")
        guard case .success(let response) = outcome else {
            Issue.record("\(row): \(outcome)")
            return
        }
        #expect(response.status == 200, "\(row)")
    }
}

@Suite struct DelegateChainTests {
    typealias Entry = DelegateChain.Entry

    @Test func aHandshakeNoTaskWaitsForAsksOnlyTheSessionLevelMethod() {
        let chain = DelegateChain.route(.serverTrust, hasTask: false, hasTaskDelegate: true, hasSessionDelegate: true)
        #expect(chain.entries == [Entry(owner: .sessionDelegate, method: .sessionLevel)])
    }

    @Test func theTwoOrdersWithEveryDelegatePresent() {
        let http = DelegateChain.route(.httpDigest, hasTask: true, hasTaskDelegate: true, hasSessionDelegate: true)
        #expect(
            http.entries == [
                Entry(owner: .taskDelegate, method: .taskLevel), Entry(owner: .sessionDelegate, method: .taskLevel),
                Entry(owner: .sessionDelegate, method: .sessionLevel),
            ]
        )
        for method in [AuthenticationMethod.serverTrust, .clientCertificate, .negotiate, .ntlm] {
            let connection = DelegateChain.route(method, hasTask: true, hasTaskDelegate: true, hasSessionDelegate: true)
            #expect(
                connection.entries == [
                    Entry(owner: .sessionDelegate, method: .sessionLevel),
                    Entry(owner: .taskDelegate, method: .taskLevel),
                    Entry(owner: .sessionDelegate, method: .taskLevel),
                ]
            )
        }
    }

    @Test func noDelegateMeansDefaultHandlingAtOnce() {
        for method in [AuthenticationMethod.httpBasic, .serverTrust] {
            #expect(
                DelegateChain.route(method, hasTask: true, hasTaskDelegate: false, hasSessionDelegate: false).entries
                    .isEmpty
            )
        }
    }
}
