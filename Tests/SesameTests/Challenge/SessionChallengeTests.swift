import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// A session over the test PKI with a delegate, in-memory storage and a trace recorder.
func challengeSession(
    delegate: (any SessionTaskDelegate)? = nil,
    storage: CredentialStorage? = CredentialStorage(),
    traces: Recorder<ChallengeTrace>? = nil,
    _ adjust: (inout SessionConfiguration) -> Void = { _ in }
) -> Session {
    var configuration = SessionConfiguration.default
    configuration.tls.trustRoots = .anchors([sharedPKI.root.certificate])
    configuration.credentialStorage = storage
    configuration.requestTimeout = .seconds(10)
    if let traces {
        configuration.eventObserver = { event in
            if case .challenge(let trace) = event, trace.protectionSpace.authenticationMethod != .serverTrust {
                traces.append(trace)
            }
        }
    }
    adjust(&configuration)
    return Session(configuration: configuration, delegate: delegate)
}

/// A server behind Basic with users ada (s3cret) and test (123£); protected paths start with /private.
func basicServer(tls: Bool = true, gate: BasicAuthGate? = nil) throws -> LocalServer {
    let gate = gate ?? BasicAuthGate(realm: "Sesame Test", users: ["ada": "s3cret", "test": "123£"])
    return try server(tls: tls) { request in
        if request.target.hasPrefix("/private") {
            if let refusal = gate.check(request) { return refusal }
            if request.target.hasPrefix("/private/redirect-cross/") {
                return .redirect(302, to: String(request.target.dropFirst("/private/redirect-cross/".count)))
            }
            return .text("hello \(gate.user(request) ?? "?")")
        }
        return .text("open; authorization=[\(request.headers["authorization"] ?? "")]")
    }
}

/// Answers with a fixed list of replies, one per challenge, recording what it saw.
final class ScriptedDelegate: SessionTaskDelegate {
    let replies: LockedValue<[(AuthChallengeDisposition, Credential?)]>
    let seen = Recorder<AuthenticationChallenge>()

    init(_ replies: [(AuthChallengeDisposition, Credential?)]) { self.replies = LockedValue(replies) }

    func session(
        _ session: Session,
        task: SessionTask,
        didReceive challenge: AuthenticationChallenge
    ) async -> (AuthChallengeDisposition, Credential?) {
        // Connection-level challenges reach task-level methods too (Apple's rule): not answered here.
        if challenge.protectionSpace.authenticationMethod.isSessionWide { return (.performDefaultHandling, nil) }
        seen.append(challenge)
        return replies.withLock { $0.isEmpty ? (.performDefaultHandling, nil) : $0.removeFirst() }
    }
}

let ada = Credential(user: "ada", password: "s3cret", persistence: .forSession)
let wrong = Credential(user: "ada", password: "wrong", persistence: .none)

@Suite struct SessionChallengeTests {
    @Test func aDelegateCredentialAnswersBasicAndTheNextRequestIsPreemptive() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let delegate = ScriptedDelegate([(.useCredential, ada)])
        let session = challengeSession(delegate: delegate)
        let (data, response) = try await session.data(from: url(origin, "/private/a"))
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "hello ada")
        let challenge = try #require(delegate.seen.all.first)
        #expect(challenge.protectionSpace.authenticationMethod == .httpBasic)
        #expect(challenge.protectionSpace.realm == "Sesame Test")
        #expect(challenge.protectionSpace.receivesCredentialSecurely)
        #expect(challenge.previousFailureCount == 0)
        #expect(challenge.failureResponse?.status == 401)
        // Second request in the same directory: sent with the credential, one round trip.
        let before = origin.requests.count
        let (second, _) = try await session.data(from: url(origin, "/private/b"))
        #expect(String(decoding: second, as: UTF8.self) == "hello ada")
        #expect(origin.requests.count == before + 1)
        #expect(delegate.seen.all.count == 1)
    }

    @Test func theSeedsListing41GivesUpAfterOneFailure() async throws {
        final class Listing41: SessionTaskDelegate {
            let asked = Recorder<Int>()
            // The seeds' code, with renames only.
            func session(
                _ session: Session,
                didReceive challenge: AuthenticationChallenge,
                completionHandler: @escaping @Sendable (Session.AuthChallengeDisposition, Credential?) -> Void
            ) {
                asked.append(challenge.previousFailureCount)
                guard challenge.previousFailureCount == 0 else {
                    challenge.sender?.cancel(challenge)
                    completionHandler(.cancelAuthenticationChallenge, nil)
                    return
                }
                let proposedCredential = Credential(user: "ada", password: "not it", persistence: .none)
                completionHandler(.useCredential, proposedCredential)
            }
        }
        // Over http: Listing 4-1 answers every session-level challenge with a password, server
        // trust included, which Sesame refuses (as it should).
        let origin = try basicServer(tls: false)
        defer { origin.shutdown() }
        let delegate = Listing41()
        let session = challengeSession(delegate: delegate) { $0.allowsCleartextPasswords = true }
        let error = await #expect(throws: SesameError.self) {
            _ = try await session.data(from: url(origin, "/private/x"))
        }
        #expect(error?.code == .authenticationCancelled)
        #expect(delegate.asked.all == [0, 1])
    }

    @Test func theTaskDelegateIsAskedBeforeTheSessionDelegate() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let sessionDelegate = ScriptedDelegate([(.useCredential, ada)])
        let taskDelegate = ScriptedDelegate([(.useCredential, ada)])
        let traces = Recorder<ChallengeTrace>()
        let session = challengeSession(delegate: sessionDelegate, traces: traces)
        _ = try await session.data(from: url(origin, "/private/x"), delegate: taskDelegate)
        #expect(taskDelegate.seen.all.count == 1)
        #expect(sessionDelegate.seen.all.isEmpty)
        #expect(traces.all.map(\.responder) == [.taskDelegate], "\(traces.all)")
    }

    @Test func aTaskDelegateWithoutTheMethodPassesToTheSessionDelegate() async throws {
        final class Silent: SessionTaskDelegate {}
        let origin = try basicServer()
        defer { origin.shutdown() }
        let sessionDelegate = ScriptedDelegate([(.useCredential, ada)])
        let traces = Recorder<ChallengeTrace>()
        let session = challengeSession(delegate: sessionDelegate, traces: traces)
        let (_, response) = try await session.data(from: url(origin, "/private/x"), delegate: Silent())
        #expect(response.status == 200)
        #expect(sessionDelegate.seen.all.count == 1)
        #expect(traces.all.map(\.responder) == [.sessionDelegate])
    }

    @Test func noDelegateAndNoCredentialDeliversThe401() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let traces = Recorder<ChallengeTrace>()
        let (_, response) = try await challengeSession(traces: traces).data(from: url(origin, "/private/x"))
        #expect(response.status == 401)
        #expect(traces.all.map(\.responder) == [.defaultHandling])
    }

    @Test func aPreSeededStorageAnswersWithoutAnyDelegate() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let storage = CredentialStorage()
        let space = ProtectionSpace(
            host: "localhost",
            port: origin.port,
            protocol: "https",
            realm: "Sesame Test",
            authenticationMethod: .httpBasic
        )
        try storage.setDefaultCredential(ada, for: space)
        let traces = Recorder<ChallengeTrace>()
        let (data, _) = try await challengeSession(storage: storage, traces: traces)
            .data(from: url(origin, "/private/x"))
        #expect(String(decoding: data, as: UTF8.self) == "hello ada")
        #expect(traces.all.map(\.responder) == [.storage])
    }

    @Test func aWrongStoredCredentialThenAsksTheDelegateWithItProposed() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let storage = CredentialStorage()
        let space = ProtectionSpace(
            host: "localhost",
            port: origin.port,
            protocol: "https",
            realm: "Sesame Test",
            authenticationMethod: .httpBasic
        )
        try storage.setDefaultCredential(Credential(user: "ada", password: "old", persistence: .forSession), for: space)
        let delegate = ScriptedDelegate([(.useCredential, ada)])
        let (data, _) = try await challengeSession(delegate: delegate, storage: storage)
            .data(from: url(origin, "/private/x"))
        #expect(String(decoding: data, as: UTF8.self) == "hello ada")
        let challenge = try #require(delegate.seen.all.first)
        #expect(challenge.previousFailureCount == 1)
        #expect(challenge.proposedCredential?.password == "old")
    }

    @Test func failuresAreBoundedAndCounted() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let delegate = ScriptedDelegate(Array(repeating: (.useCredential, wrong), count: 10))
        let (_, response) = try await challengeSession(delegate: delegate).data(from: url(origin, "/private/x"))
        #expect(response.status == 401)
        #expect(delegate.seen.all.map(\.previousFailureCount) == [0, 1, 2])
    }

    @Test func performDefaultHandlingUsesTheURLCredentialOnce() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let delegate = ScriptedDelegate([])
        let target = URL(string: "https://ada:wrong@localhost:\(origin.port)/private/x")!
        let (_, response) = try await challengeSession(delegate: delegate).data(from: target)
        #expect(response.status == 401)
        // The URL's credential went first without asking; then the delegate was asked once.
        #expect(delegate.seen.all.map(\.previousFailureCount) == [1])
        #expect(delegate.seen.all.first?.proposedCredential?.user == "ada")
    }

    @Test func rejectProtectionSpaceMovesToTheNextOfferedSpace() async throws {
        var gate = BasicAuthGate(realm: "Sesame Test", users: ["ada": "s3cret"])
        gate.otherChallenges = ["Bearer realm=\"api\", scope=\"read\""]
        let origin = try basicServer(gate: gate)
        defer { origin.shutdown() }
        final class RejectBearer: SessionTaskDelegate {
            let seen = Recorder<AuthenticationMethod>()
            func session(
                _ session: Session,
                task: SessionTask,
                didReceive challenge: AuthenticationChallenge
            ) async -> (AuthChallengeDisposition, Credential?) {
                if challenge.protectionSpace.authenticationMethod == .serverTrust {
                    return (.performDefaultHandling, nil)
                }
                seen.append(challenge.protectionSpace.authenticationMethod)
                if challenge.protectionSpace.authenticationMethod == .httpBasic { return (.useCredential, ada) }
                return (.rejectProtectionSpace, nil)
            }
        }
        let delegate = RejectBearer()
        let (data, _) = try await challengeSession(delegate: delegate).data(from: url(origin, "/private/x"))
        #expect(String(decoding: data, as: UTF8.self) == "hello ada")
        // Basic ranks before a scheme Sesame cannot answer; rejecting it first is also possible.
        #expect(delegate.seen.all == [.httpBasic])
    }

    @Test func rejectingEverySpaceDeliversTheResponse() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let delegate = ScriptedDelegate([(.rejectProtectionSpace, nil)])
        let (_, response) = try await challengeSession(delegate: delegate).data(from: url(origin, "/private/x"))
        #expect(response.status == 401)
    }

    @Test func basicIsNotSentOverCleartextUnlessAllowed() async throws {
        let origin = try basicServer(tls: false)
        defer { origin.shutdown() }
        let delegate = ScriptedDelegate([(.useCredential, ada)])
        let error = await #expect(throws: SesameError.self) {
            _ = try await challengeSession(delegate: delegate).data(from: url(origin, "/private/x"))
        }
        #expect(error?.code == .cleartextCredentialRefused)
        #expect(origin.requests.allSatisfy { $0.headers["authorization"] == nil })
        #expect(delegate.seen.all.first?.protectionSpace.receivesCredentialSecurely == false)

        let allowed = challengeSession(delegate: ScriptedDelegate([(.useCredential, ada)])) {
            $0.allowsCleartextPasswords = true
        }
        let (data, _) = try await allowed.data(from: url(origin, "/private/x"))
        #expect(String(decoding: data, as: UTF8.self) == "hello ada")
    }

    @Test func aUTF8PasswordIsSentAsUTF8() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let delegate = ScriptedDelegate([
            (.useCredential, Credential(user: "test", password: "123£", persistence: .none))
        ])
        let (data, _) = try await challengeSession(delegate: delegate).data(from: url(origin, "/private/x"))
        #expect(String(decoding: data, as: UTF8.self) == "hello test")
    }

    @Test func credentialsAreStoredPerPersistence() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let space = ProtectionSpace(
            host: "localhost",
            port: origin.port,
            protocol: "https",
            realm: "Sesame Test",
            authenticationMethod: .httpBasic
        )
        for persistence in [CredentialPersistence.none, .forSession] {
            let storage = CredentialStorage()
            let credential = Credential(user: "ada", password: "s3cret", persistence: persistence)
            let delegate = ScriptedDelegate([(.useCredential, credential)])
            _ = try await challengeSession(delegate: delegate, storage: storage).data(from: url(origin, "/private/x"))
            let stored = try storage.credentials(for: space)
            #expect(stored.isEmpty == (persistence == .none))
        }
    }

    @Test func aPermanentCredentialIsWrittenOnceNotAgainWithEachPreemptiveRequest() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("credentials.json")
        let credential = Credential(user: "ada", password: "s3cret", persistence: .permanent)
        let delegate = ScriptedDelegate([(.useCredential, credential)])
        let session = challengeSession(delegate: delegate, storage: CredentialStorage(fileURL: file))
        _ = try await session.data(from: url(origin, "/private/a"))
        var first = stat()
        #expect(stat(file.path, &first) == 0)
        for name in ["b", "c", "d"] {
            let (data, _) = try await session.data(from: url(origin, "/private/\(name)"))
            #expect(String(decoding: data, as: UTF8.self) == "hello ada")
        }
        // Sent preemptively from what the session keeps: nothing new to store, so no rewrite.
        var later = stat()
        #expect(stat(file.path, &later) == 0)
        #expect(later.st_ino == first.st_ino)
        #expect(later.st_mtim.tv_sec == first.st_mtim.tv_sec && later.st_mtim.tv_nsec == first.st_mtim.tv_nsec)
        #expect(delegate.seen.all.count == 1)
    }

    @Test func aRedirectAfterASuccessfulChallengeCarriesNoCredentialToAnotherOrigin() async throws {
        let other = try server(tls: true) { request in
            .text("other; authorization=[\(request.headers["authorization"] ?? "")]")
        }
        defer { other.shutdown() }
        let origin = try basicServer()
        defer { origin.shutdown() }
        let delegate = ScriptedDelegate([(.useCredential, ada)])
        let session = challengeSession(delegate: delegate)
        let target = url(origin, "/private/redirect-cross/\(other.baseURL)/landing")
        let (data, response) = try await session.data(from: target)
        #expect(response.status == 200)
        #expect(String(decoding: data, as: UTF8.self) == "other; authorization=[]")
        #expect(delegate.seen.all.count == 1)
        // Same origin, outside the challenged directory: not sent either.
        let (open, _) = try await session.data(from: url(origin, "/open"))
        #expect(String(decoding: open, as: UTF8.self) == "open; authorization=[]")
    }

    @Test func aPasswordInTheURLIsCleartextConsentForItsOriginOnly() async throws {
        // Both plain http; the second is another origin (another port) with a stored password.
        let other = try basicServer(tls: false)
        defer { other.shutdown() }
        let origin = try basicServer(tls: false)
        defer { origin.shutdown() }
        let storage = CredentialStorage()
        let otherSpace = ProtectionSpace(
            host: "localhost",
            port: other.port,
            protocol: "http",
            realm: "Sesame Test",
            authenticationMethod: .httpBasic
        )
        try storage.setDefaultCredential(
            Credential(user: "test", password: "123£", persistence: .forSession),
            for: otherSpace
        )
        let session = challengeSession(storage: storage)
        let start = URL(
            string: "http://ada:s3cret@localhost:\(origin.port)/private/redirect-cross/\(other.baseURL)/private/y"
        )!
        let (_, response) = try await session.data(from: start)
        // The consent given with the URL covered its own origin: ada went there in clear.
        #expect(origin.requests.contains { $0.headers["authorization"] != nil })
        // Not the redirect target: its stored password stays off the wire; the 401 is delivered.
        #expect(response.status == 401)
        #expect(other.requests.count == 1)
        #expect(other.requests.allSatisfy { $0.headers["authorization"] == nil })
    }

    @Test func aPasswordInTheURLIsNotOverriddenByOneKeptFromAnEarlierRequest() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let session = challengeSession()
        let right = URL(string: "https://ada:s3cret@localhost:\(origin.port)/private/x")!
        let (data, _) = try await session.data(from: right)
        #expect(String(decoding: data, as: UTF8.self) == "hello ada")
        // The same space, now sent preemptively; a request naming another password is that
        // request's own choice, and the server's refusal is its answer.
        let wrong = URL(string: "https://ada:wrong@localhost:\(origin.port)/private/y")!
        let (_, response) = try await session.data(from: wrong)
        #expect(response.status == 401)
        let (again, _) = try await session.data(from: URL(string: "https://localhost:\(origin.port)/private/z")!)
        #expect(String(decoding: again, as: UTF8.self) == "hello ada", "without user info, the kept credential goes")
    }

    @Test func theSenderAndTheHandlerTogetherGiveOneAnswer() async throws {
        final class Both: SessionTaskDelegate {
            func session(
                _ session: Session,
                task: SessionTask,
                didReceive challenge: AuthenticationChallenge,
                completionHandler: @escaping @Sendable (AuthChallengeDisposition, Credential?) -> Void
            ) {
                if challenge.protectionSpace.authenticationMethod == .serverTrust {
                    return completionHandler(.performDefaultHandling, nil)
                }
                challenge.sender?.use(ada, for: challenge)
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
        }
        let origin = try basicServer()
        defer { origin.shutdown() }
        let (data, _) = try await challengeSession(delegate: Both()).data(from: url(origin, "/private/x"))
        #expect(String(decoding: data, as: UTF8.self) == "hello ada")
    }

    @Test func serverTrustIsASessionChallenge() async throws {
        final class TrustDelegate: SessionTaskDelegate {
            let spaces = Recorder<ProtectionSpace>()
            let reply: AuthChallengeDisposition
            init(_ reply: AuthChallengeDisposition) { self.reply = reply }
            func session(
                _ session: Session,
                didReceive challenge: AuthenticationChallenge
            ) async -> (AuthChallengeDisposition, Credential?) {
                spaces.append(challenge.protectionSpace)
                guard let trust = challenge.protectionSpace.serverTrust else { return (.performDefaultHandling, nil) }
                return (reply, Credential(trust: trust))
            }
        }
        let origin = try server(tls: true) { _ in .text("ok") }
        defer { origin.shutdown() }
        // Accepted by the delegate even with no anchors configured.
        let accepting = TrustDelegate(.useCredential)
        let session = challengeSession(delegate: accepting) { $0.tls.trustRoots = .anchors([]) }
        let (_, response) = try await session.data(from: url(origin, "/"))
        #expect(response.status == 200)
        let space = try #require(accepting.spaces.all.first)
        #expect(space.authenticationMethod == .serverTrust)
        #expect(space.serverTrust?.peerChain.isEmpty == false)

        let cancelling = TrustDelegate(.cancelAuthenticationChallenge)
        let error = await #expect(throws: SesameError.self) {
            _ = try await challengeSession(delegate: cancelling).data(from: url(origin, "/"))
        }
        #expect(error?.code == .authenticationCancelled)

        let defaulting = TrustDelegate(.performDefaultHandling)
        let rejected = await #expect(throws: SesameError.self) {
            _ = try await challengeSession(delegate: defaulting) { $0.tls.trustRoots = .anchors([]) }
                .data(from: url(origin, "/"))
        }
        #expect(rejected?.code == .serverTrustRejected)
    }

    @Test func aStreamedBodyIsNotSentAgainForAChallenge() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        var request = HTTPRequest(url: url(origin, "/private/upload"))
        request.method = "POST"
        request.body = .stream(
            AsyncStream<[UInt8]> {
                $0.yield(Array("once".utf8))
                $0.finish()
            },
            length: 4
        )
        let delegate = ScriptedDelegate([(.useCredential, ada)])
        let (_, response) = try await challengeSession(delegate: delegate).data(for: request)
        #expect(response.status == 401)
        #expect(origin.requests.count == 1)
    }
}
