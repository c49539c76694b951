import Foundation
import Testing

@testable import Sesame

/// The task's journey without I/O: every action the machine asks for, for each event in each
/// state, and the effects it leaves for the driver.
@Suite struct TaskStateMachineTests {
    static let page = URL(string: "https://h.test/a/page")!
    static let basicChallenge: HTTPHeaders = ["WWW-Authenticate": "Basic realm=\"r\""]

    func machine(
        _ request: HTTPRequest = HTTPRequest(url: page),
        taskDelegate: Bool = false,
        sessionDelegate: Bool = true,
        _ adjust: (inout SessionConfiguration) -> Void = { _ in }
    ) -> TaskStateMachine {
        var configuration = SessionConfiguration.default
        configuration.eventObserver = { _ in }
        adjust(&configuration)
        let origin = Origin(request.url)!
        return TaskStateMachine(
            request: request,
            origin: origin,
            target: RequestHead.target(of: request.url),
            settings: TaskStateMachine.Settings(configuration),
            task: SessionTask(request: request, delegate: nil),
            hasTaskDelegate: taskDelegate,
            hasSessionDelegate: sessionDelegate
        )
    }

    func response(_ status: Int, _ headers: HTTPHeaders = [:], url: URL = page) -> HTTPResponse {
        HTTPResponse(status: status, reason: "", headers: headers, url: url)
    }

    let direct = TaskStateMachine.Routing(route: .direct)

    func miss(_ comment: Comment, _ where: SourceLocation = #_sourceLocation) {
        Issue.record(comment, sourceLocation: `where`)
    }

    /// The request `action` sends, or a recorded issue.
    func sent(_ action: TaskStateMachine.Action, _ where: SourceLocation = #_sourceLocation) -> HTTPRequest? {
        guard case .send(let exchange) = action else {
            Issue.record("expected a send, got \(action)", sourceLocation: `where`)
            return nil
        }
        return exchange.request
    }

    func isRoute(_ action: TaskStateMachine.Action) -> Bool {
        if case .route = action { return true }
        return false
    }

    /// Drives a fresh machine to the head of its first response.
    func sendFirst(_ machine: inout TaskStateMachine, _ routing: TaskStateMachine.Routing? = nil) -> HTTPRequest? {
        #expect(isRoute(machine.start()))
        return sent(machine.routed(routing ?? direct))
    }

    @Test func aPlainRequestGoesOutOnceAndCompletes() throws {
        var machine = machine()
        let request = try #require(sendFirst(&machine))
        #expect(!request.headers.contains("Authorization"))
        guard case .deliver(let delivered, let check) = machine.responseHead(response(200)) else {
            Issue.record("not delivered")
            return
        }
        #expect(delivered.status == 200 && check == nil)
        guard case .complete(let final) = machine.bodyFinished() else {
            Issue.record("not complete")
            return
        }
        #expect(final.status == 200)
        #expect(machine.takeEffects().isEmpty)
    }

    // MARK: Sending again

    /// The exchange `action` sends, or a recorded issue.
    func exchange(
        _ action: TaskStateMachine.Action,
        _ where: SourceLocation = #_sourceLocation
    ) -> TaskStateMachine.Exchange? {
        guard case .send(let exchange) = action else {
            Issue.record("expected a send, got \(action)", sourceLocation: `where`)
            return nil
        }
        return exchange
    }

    func failure(_ action: TaskStateMachine.Action) -> SesameError? {
        guard case .fail(let error) = action else { return nil }
        return error as? SesameError
    }

    final class Carrier: Sendable {}

    static func post(_ body: HTTPBody) -> HTTPRequest {
        var post = HTTPRequest(url: page)
        post.method = "POST"
        post.body = body
        return post
    }

    @Test func anIdempotentRequestOnAStaleConnectionIsSentOnceMore() throws {
        var machine = machine()
        _ = try #require(sendFirst(&machine))
        let closed = SesameError(.connectionClosed, "closed before the answer")
        let again = try #require(exchange(machine.sendFailed(.staleConnection(closed))))
        #expect(again.request.url == Self.page && !again.http1Only && again.avoiding == nil)
        #expect(failure(machine.sendFailed(.staleConnection(closed)))?.code == .connectionClosed)
    }

    @Test func aPOSTOnAStaleConnectionIsNotSentAgain() throws {
        var machine = machine(Self.post(.data(Data("x".utf8))))
        _ = try #require(sendFirst(&machine))
        let closed = SesameError(.connectionClosed, "closed before the answer")
        #expect(failure(machine.sendFailed(.staleConnection(closed)))?.code == .connectionClosed)
    }

    @Test func aRequestTheServerDidNotProcessGoesElsewhereAFewTimesThenFails() throws {
        var machine = machine(Self.post(.data(Data("x".utf8))))
        _ = try #require(sendFirst(&machine))
        let carrier = Carrier()
        let refused = HTTP2Exchange.Unprocessed(SesameError(.connectionReset, "REFUSED_STREAM"), certain: true)
        for _ in 0..<TaskStateMachine.maximumUnprocessedSends {
            let failure = TaskStateMachine.SendFailure.unprocessed(
                refused,
                connection: carrier,
                reused: false
            )
            let again = try #require(exchange(machine.sendFailed(failure)))
            #expect(again.avoiding === carrier && !again.http1Only)
        }
        let last = TaskStateMachine.SendFailure.unprocessed(refused, connection: carrier, reused: true)
        #expect(failure(machine.sendFailed(last))?.code == .connectionReset)
    }

    @Test func aStreamedBodyIsNotSentAgainEvenWhenTheServerDidNotProcessIt() throws {
        let (stream, _) = AsyncThrowingStream<[UInt8], any Error>.makeStream()
        var machine = machine(Self.post(.stream(length: nil, stream)))
        _ = try #require(sendFirst(&machine))
        let refused = HTTP2Exchange.Unprocessed(SesameError(.connectionReset, "REFUSED_STREAM"), certain: true)
        let failure = TaskStateMachine.SendFailure.unprocessed(refused, connection: Carrier(), reused: true)
        #expect(self.failure(machine.sendFailed(failure))?.code == .connectionReset)
    }

    @Test func http11RequiredSendsTheRequestOverHTTP11() throws {
        var machine = machine()
        _ = try #require(sendFirst(&machine))
        let carrier = Carrier()
        let required = HTTP2Exchange.Unprocessed(
            SesameError(.protocolError, "HTTP_1_1_REQUIRED"),
            certain: true,
            requiresHTTP1: true
        )
        let failure = TaskStateMachine.SendFailure.unprocessed(required, connection: carrier, reused: true)
        let again = try #require(exchange(machine.sendFailed(failure)))
        #expect(again.http1Only)
    }

    /// A connection that ended before any of the answer may have carried the request: sent again
    /// only when it is idempotent and the connection had proved itself before.
    @Test func aLostStreamIsSentAgainOnlyWhenIdempotentOnAReusedConnection() throws {
        let carrier = Carrier()
        let lost = HTTP2Exchange.Unprocessed(SesameError(.connectionClosed, "closed"), certain: false)
        var fresh = machine()
        _ = try #require(sendFirst(&fresh))
        let onNew = TaskStateMachine.SendFailure.unprocessed(lost, connection: carrier, reused: false)
        #expect(failure(fresh.sendFailed(onNew))?.code == .connectionClosed)
        var reused = machine()
        _ = try #require(sendFirst(&reused))
        let onOld = TaskStateMachine.SendFailure.unprocessed(lost, connection: carrier, reused: true)
        #expect(exchange(reused.sendFailed(onOld)) != nil)
    }

    @Test func aKnownCredentialGoesOutPreemptivelyAndIsNotKeptAgain() throws {
        var machine = machine()
        #expect(machine.wantsPreemptiveAttempt)
        let known = try #require(attempt(for: ada, responder: .preemptive))
        var routing = direct
        routing.preemptive = known
        let request = try #require(sendFirst(&machine, routing))
        #expect(request.headers["Authorization"] == "Basic YWRhOnMzY3JldA==")
        guard case .deliver = machine.responseHead(response(200)) else { return miss("not delivered") }
        let effects = machine.takeEffects()
        #expect(!effects.contains { if case .succeeded = $0 { true } else { false } })
        #expect(effects.contains { if case .trace(let trace) = $0 { trace.responder == .preemptive } else { false } })
    }

    @Test func aRequestWithItsOwnAuthorizationWantsNoPreemptiveCredential() {
        let own = HTTPRequest(url: Self.page, headers: ["Authorization": "Bearer t"])
        #expect(!machine(own).wantsPreemptiveAttempt)
    }

    @Test func a401LooksUpThenWalksTheChainThenRetriesAndKeepsTheCredential() throws {
        var machine = machine(taskDelegate: true)
        _ = sendFirst(&machine)
        guard case .lookUpCredential(let space) = machine.responseHead(response(401, Self.basicChallenge)) else {
            return miss("no look-up")
        }
        #expect(space.realm == "r" && space.authenticationMethod == .httpBasic)
        var asked: [DelegateChain.Entry] = []
        var action = machine.credentialFound(nil)
        while case .ask(let entry, _) = action {
            asked.append(entry)
            // Only the session delegate's session-level method implements it.
            action = machine.challengeAnswered(
                entry.owner == .sessionDelegate && entry.method == .sessionLevel
                    ? .answered(.useCredential, ada) : .methodMissing
            )
        }
        #expect(
            asked == [
                .init(owner: .taskDelegate, method: .taskLevel), .init(owner: .sessionDelegate, method: .taskLevel),
                .init(owner: .sessionDelegate, method: .sessionLevel),
            ]
        )
        #expect(isRoute(action))
        let retried = try #require(sent(machine.routed(direct)))
        #expect(retried.headers["Authorization"] == "Basic YWRhOnMzY3JldA==")
        guard case .deliver = machine.responseHead(response(200)) else { return miss("not delivered") }
        let effects = machine.takeEffects()
        let kept = effects.compactMap { effect -> URL? in
            if case .succeeded(_, .origin(let url)) = effect { return url }
            return nil
        }
        #expect(kept == [Self.page])
        let answered = effects.compactMap { effect -> ChallengeTrace? in
            if case .trace(let trace) = effect, trace.disposition == .useCredential { return trace }
            return nil
        }
        #expect(answered.first?.responder == .sessionDelegate)
        #expect(answered.first?.delegateMethod == .sessionLevel)
    }

    @Test func withNoDelegateA401GoesToDefaultHandlingAndIsDelivered() {
        var machine = machine(sessionDelegate: false)
        _ = sendFirst(&machine)
        guard case .lookUpCredential = machine.responseHead(response(401, Self.basicChallenge)) else {
            return miss("no look-up")
        }
        guard case .deliver(let delivered, _) = machine.credentialFound(nil) else {
            return miss("not delivered")
        }
        #expect(delivered.status == 401)
        let traces = machine.takeEffects().compactMap { if case .trace(let trace) = $0 { trace } else { nil } }
        #expect(traces.map(\.responder) == [.defaultHandling])
    }

    @Test func aStoredCredentialIsSentWithoutAskingAndARefusalThenAsks() throws {
        var machine = machine()
        _ = sendFirst(&machine)
        _ = machine.responseHead(response(401, Self.basicChallenge))
        #expect(isRoute(machine.credentialFound((wrong, .storage))))
        _ = sent(machine.routed(direct))
        // Refused: the look-up comes again (for the proposed credential), then the delegates.
        guard case .lookUpCredential = machine.responseHead(response(401, Self.basicChallenge)) else {
            return miss("no look-up")
        }
        guard case .ask(_, let challenge) = machine.credentialFound((wrong, .storage)) else {
            return miss("no question")
        }
        #expect(challenge.previousFailureCount == 1)
        #expect(challenge.proposedCredential == wrong)
        guard case .fail(let error) = machine.challengeAnswered(.answered(.cancelAuthenticationChallenge, nil)) else {
            return miss("not failed")
        }
        #expect((error as? SesameError)?.code == .authenticationCancelled)
    }

    @Test func aFailedLookUpFailsTheTask() {
        var machine = machine()
        _ = sendFirst(&machine)
        _ = machine.responseHead(response(401, Self.basicChallenge))
        guard case .fail(let error) = machine.failed(SesameError(.credentialStoreCorrupt, "x")) else {
            return miss("not failed")
        }
        #expect((error as? SesameError)?.code == .credentialStoreCorrupt)
    }

    @Test func aStreamedBodyIsNotSentAgainAndThe401IsDelivered() {
        let stream = AsyncThrowingStream<[UInt8], any Error> { $0.finish() }
        var machine = machine(HTTPRequest(url: Self.page, method: "PUT", body: .stream(length: nil, stream)))
        _ = sendFirst(&machine)
        _ = machine.responseHead(response(401, Self.basicChallenge))
        guard case .deliver(let delivered, _) = machine.credentialFound((ada, .storage)) else {
            return miss("not delivered")
        }
        #expect(delivered.status == 401)
        #expect(machine.takeEffects().contains { if case .problem = $0 { true } else { false } })
    }

    @Test(arguments: [false, true])
    func aRedirectIsDecidedThenFollowedWithoutCredentialsElsewhere(refused: Bool) throws {
        var original = HTTPRequest(
            url: Self.page,
            headers: ["Authorization": "Bearer t", "Cookie": "c=1", "X-Kept": "y"]
        )
        original.method = "GET"
        var machine = machine(original)
        _ = sendFirst(&machine)
        let redirect = response(302, ["Location": "https://other.test/next"])
        guard case .decideRedirect(_, let proposed) = machine.responseHead(redirect) else {
            return miss("no decision asked")
        }
        #expect(proposed.url.absoluteString == "https://other.test/next")
        if refused {
            guard case .deliver(let delivered, _) = machine.redirectDecided(nil) else {
                return miss("not delivered")
            }
            #expect(delivered.status == 302)
            return
        }
        // A delegate that puts the credential back does not get it sent to another origin.
        guard case .followRedirect(let followed) = machine.redirectDecided(proposed) else {
            return miss("not followed")
        }
        for name in ["Authorization", "Cookie"] { #expect(!followed.headers.contains(name)) }
        #expect(followed.headers["X-Kept"] == "y")
        #expect(machine.origin == Origin(URL(string: "https://other.test/")!))
        let effects = machine.takeEffects()
        #expect(effects.contains { if case .redirected(302, let url) = $0 { url == proposed.url } else { false } })
        let next = try #require(sent(machine.routed(direct)))
        #expect(next.url == proposed.url && !next.headers.contains("Authorization"))
    }

    @Test func redirectsStopAtTheLimit() {
        var machine = machine { $0.maximumRedirects = 2 }
        #expect(isRoute(machine.start()))
        var last: TaskStateMachine.Action = .route
        for hop in 0..<3 {
            _ = sent(machine.routed(direct))
            guard case .decideRedirect(_, let proposed) = machine.responseHead(response(301, ["Location": "/r\(hop)"]))
            else { return miss("no decision asked") }
            last = machine.redirectDecided(proposed)
        }
        guard case .fail(let error) = last else { return miss("not failed: \(last)") }
        #expect((error as? SesameError)?.code == .tooManyRedirects)
    }

    @Test func withRedirectsOffTheRedirectIsDelivered() {
        var machine = machine { $0.followsRedirects = false }
        _ = sendFirst(&machine)
        guard case .deliver(let delivered, _) = machine.responseHead(response(301, ["Location": "/x"])) else {
            return miss("not delivered")
        }
        #expect(delivered.status == 301)
    }

    @Test func aForwardingProxyGetsItsOwnURLCredentialAndKeepsIt() throws {
        let plain = URL(string: "http://origin.test/")!
        var machine = machine(HTTPRequest(url: plain, headers: ["Proxy-Authorization": "leaked"]))
        let (proxy, credential) = try ProxyEndpoint.parse("http://pu:pp@proxy.test:3128")
        var routing = TaskStateMachine.Routing(route: .forward(proxy), proxyCredential: credential)
        #expect(machine.wantsKnownAttempt(forProxy: proxy))
        _ = sendFirst(&machine, routing)
        let challenge: HTTPHeaders = ["Proxy-Authenticate": "Basic realm=\"p\""]
        // The proxy URL's credential answers without a look-up or a question.
        #expect(isRoute(machine.responseHead(response(407, challenge, url: plain))))
        routing.knownProxyAttempt = nil
        let retried = try #require(sent(machine.routed(routing)))
        #expect(retried.headers["Proxy-Authorization"] == "Basic cHU6cHA=")
        guard case .deliver = machine.responseHead(response(200, url: plain)) else {
            return miss("not delivered")
        }
        let kept = machine.takeEffects().compactMap { effect -> ProxyEndpoint? in
            if case .succeeded(_, .proxy(let endpoint)) = effect { return endpoint }
            return nil
        }
        #expect(kept == [proxy])
    }

    @Test func proxyCredentialsNeverGoToAnOriginOrATunnel() throws {
        var machine = machine(HTTPRequest(url: Self.page, headers: ["Proxy-Authorization": "Basic eA=="]))
        let request = try #require(sendFirst(&machine))
        #expect(!request.headers.contains("Proxy-Authorization"))
    }

    /// The `CONNECT` the action asks for, or a recorded issue.
    func tunnelRequest(
        _ action: TaskStateMachine.Action,
        _ where: SourceLocation = #_sourceLocation
    ) -> TaskStateMachine.TunnelRequest? {
        guard case .connectTunnel(let request) = action else {
            Issue.record("expected a CONNECT, got \(action)", sourceLocation: `where`)
            return nil
        }
        return request
    }

    @Test func aTunnelsProxyIsAnsweredWithItsURLCredentialThenTheRequestGoesInside() throws {
        var machine = machine(HTTPRequest(url: Self.page, headers: ["Proxy-Authorization": "leaked"]))
        let (proxy, credential) = try ProxyEndpoint.parse("http://pu:pp@proxy.test:3128")
        let request = try #require(
            sendFirst(&machine, TaskStateMachine.Routing(route: .tunnel(proxy), proxyCredential: credential))
        )
        #expect(!request.headers.contains("Proxy-Authorization"))
        // The pool has no connection through the tunnel: CONNECT first, with nothing the proxy did not ask for.
        let first = try #require(tunnelRequest(machine.tunnelNeeded(known: nil)))
        #expect(first.authority == "h.test:443" && first.proxy == proxy && first.proxyAuthorization == nil)
        let challenge: HTTPHeaders = ["Proxy-Authenticate": "Basic realm=\"p\""]
        let second = try #require(tunnelRequest(machine.tunnelAnswered(response(407, challenge))))
        #expect(second.proxyAuthorization == "Basic cHU6cHA=")
        guard case .sendInTunnel(let exchange) = machine.tunnelAnswered(response(200)) else {
            return miss("the request did not go into the tunnel")
        }
        #expect(!exchange.request.headers.contains("Proxy-Authorization"))
        let kept = machine.takeEffects().compactMap { effect -> ProxyEndpoint? in
            if case .succeeded(_, .proxy(let endpoint)) = effect { return endpoint }
            return nil
        }
        #expect(kept == [proxy])
        guard case .deliver(let delivered, _) = machine.responseHead(response(200)) else {
            return miss("not delivered")
        }
        #expect(delivered.status == 200)
    }

    @Test func aCredentialTheSessionKeepsForTheProxyGoesWithTheFirstConnect() throws {
        var machine = machine()
        let (proxy, _) = try ProxyEndpoint.parse("http://proxy.test:3128")
        _ = sendFirst(&machine, TaskStateMachine.Routing(route: .tunnel(proxy)))
        let known = try #require(
            attempt(for: Credential(user: "k", password: "kp", persistence: .forSession), responder: .preemptive)
        )
        let first = try #require(tunnelRequest(machine.tunnelNeeded(known: known)))
        #expect(first.proxyAuthorization == "Basic azprcA==")
    }

    @Test(arguments: [(403, SesameError.Code.proxyConnectFailed), (407, .proxyAuthenticationFailed)])
    func aTunnelTheProxyRefusesFailsTheTask(status: Int, code: SesameError.Code) throws {
        var machine = machine(sessionDelegate: false)
        let (proxy, _) = try ProxyEndpoint.parse("http://proxy.test:3128")
        _ = sendFirst(&machine, TaskStateMachine.Routing(route: .tunnel(proxy)))
        _ = try #require(tunnelRequest(machine.tunnelNeeded(known: nil)))
        // No delegate and nothing stored: a 407 ends in a look-up that finds nothing.
        var action = machine.tunnelAnswered(response(status, ["Proxy-Authenticate": "Basic realm=\"p\""]))
        if case .lookUpCredential = action { action = machine.credentialFound(nil) }
        #expect(failure(action)?.code == code)
    }

    @Test func anIPv6OriginIsNamedInBracketsInConnect() throws {
        let url = URL(string: "https://[::1]/x")!
        var machine = machine(HTTPRequest(url: url))
        let (proxy, _) = try ProxyEndpoint.parse("http://proxy.test:3128")
        _ = sendFirst(&machine, TaskStateMachine.Routing(route: .tunnel(proxy)))
        #expect(tunnelRequest(machine.tunnelNeeded(known: nil))?.authority == "[::1]:443")
    }

    // MARK: Handshake challenges

    static let certificateSpace = ProtectionSpace(
        host: "h.test",
        port: 443,
        protocol: "https",
        realm: nil,
        authenticationMethod: .clientCertificate
    )

    @Test func aHandshakesChallengeWalksTheConnectionLevelChainThenTheRequestGoesOn() throws {
        var machine = machine(taskDelegate: true)
        _ = try #require(sendFirst(&machine))
        // Connection-level: the session delegate's session-level method first.
        guard case .ask(let first, let challenge) = machine.handshakeChallenged(Self.certificateSpace) else {
            return miss("no question")
        }
        #expect(first.owner == .sessionDelegate && first.method == .sessionLevel)
        #expect(challenge.protectionSpace == Self.certificateSpace && challenge.previousFailureCount == 0)
        guard case .ask(let second, _) = machine.challengeAnswered(.methodMissing) else {
            return miss("no next question")
        }
        #expect(second.owner == .taskDelegate && second.method == .taskLevel)
        let credential = Credential(user: "u", password: "p", persistence: .none)
        guard
            case .answerHandshake(let disposition, let answered) = machine.challengeAnswered(
                .answered(.useCredential, credential)
            )
        else { return miss("the handshake got no answer") }
        #expect(disposition == .useCredential && answered == credential)
        let traces = machine.takeEffects().compactMap { effect -> ChallengeTrace? in
            if case .trace(let trace) = effect { return trace }
            return nil
        }
        #expect(traces.map(\.responder) == [.taskDelegate] && traces.first?.delegateMethod == .taskLevel)
        // The machine is where it was: waiting for the response.
        guard case .deliver = machine.responseHead(response(200)) else { return miss("not delivered") }
    }

    @Test func withNoDelegateAHandshakesChallengeGetsDefaultHandlingAtOnce() throws {
        var machine = machine(sessionDelegate: false)
        _ = try #require(sendFirst(&machine))
        guard case .answerHandshake(let disposition, nil) = machine.handshakeChallenged(Self.certificateSpace) else {
            return miss("not default handling")
        }
        #expect(disposition == .performDefaultHandling)
    }

    @Test func aChallengeFromTheProxysHandshakeLeavesTheTunnelWhereItWas() throws {
        var machine = machine()
        let (proxy, _) = try ProxyEndpoint.parse("https://proxy.test:3128")
        _ = sendFirst(&machine, TaskStateMachine.Routing(route: .tunnel(proxy)))
        _ = try #require(tunnelRequest(machine.tunnelNeeded(known: nil)))
        guard case .ask = machine.handshakeChallenged(Self.certificateSpace) else { return miss("no question") }
        guard
            case .answerHandshake(.cancelAuthenticationChallenge, _) = machine.challengeAnswered(
                .answered(.cancelAuthenticationChallenge, nil)
            )
        else { return miss("the handshake got no answer") }
        guard case .sendInTunnel = machine.tunnelAnswered(response(200)) else { return miss("no tunnel") }
    }

    @Test func aProxyChallengeIsNotTheOriginsAndA401BehindTheProxyIs() throws {
        let plain = URL(string: "http://origin.test/")!
        var machine = machine(HTTPRequest(url: plain)) { $0.allowsCleartextPasswords = true }
        let (proxy, _) = try ProxyEndpoint.parse("http://proxy.test:3128")
        let routing = TaskStateMachine.Routing(route: .forward(proxy))
        _ = sendFirst(&machine, routing)
        // A 407 without a usable offer and no one to answer: delivered as it is, the origin untouched.
        guard
            case .lookUpCredential(let space) = machine.responseHead(
                response(407, ["Proxy-Authenticate": "Basic realm=\"p\""], url: plain)
            )
        else { return miss("no look-up") }
        #expect(space.isProxy)
    }

    @Test func failedEndsTheTaskFromAnyLiveState() {
        var machine = machine()
        _ = sendFirst(&machine)
        guard case .fail = machine.failed(SesameError(.connectionReset, "x")) else { return miss("not failed") }
    }

    #if DEBUG
    /// An event the current state cannot take is a bug in the driver: it stops a debug build.
    @Test func anImpossibleEventTrapsInDebugBuilds() async {
        await #expect(processExitsWith: .failure) {
            var machine = TaskStateMachineTests().machine()
            _ = machine.responseHead(TaskStateMachineTests().response(200))
        }
        await #expect(processExitsWith: .failure) {
            var machine = TaskStateMachineTests().machine()
            _ = machine.start()
            _ = machine.bodyFinished()
        }
        await #expect(processExitsWith: .failure) {
            var machine = TaskStateMachineTests().machine()
            _ = machine.start()
            _ = machine.routed(TaskStateMachine.Routing(route: .direct))
            _ = machine.redirectDecided(nil)
        }
        await #expect(processExitsWith: .failure) {
            var machine = TaskStateMachineTests().machine()
            _ = machine.start()
            _ = machine.challengeAnswered(.methodMissing)
        }
    }
    #endif

    func attempt(for credential: Credential, responder: ChallengeTrace.Responder) -> ChallengeResolver.Attempt? {
        let space = ProtectionSpace(
            host: "h.test",
            port: 443,
            protocol: "https",
            realm: "r",
            authenticationMethod: .httpBasic
        )
        let challenge = AuthChallengeParser.parse("Basic realm=\"r\"").challenges[0]
        let offer = ChallengeOffer(space: space, challenge: challenge, digest: nil)
        return try? ChallengeResolver.Attempt.make(credential, for: offer, responder: responder, bodyIsHashable: true)
            .get()
    }
}

/// The Bearer token's part of the journey: sent to the covered origin, one refresh per task after a
/// token failure, then the 401 delivered.
@Suite struct TaskStateMachineBearerTests {
    struct NoTokens: TokenAuthenticator {
        func currentToken() async throws -> String? { nil }
        func refreshToken(rejecting rejected: String?) async throws -> String { "new" }
    }

    static let page = URL(string: "https://h.test/a/page")!
    static let refused: HTTPHeaders = ["WWW-Authenticate": "Bearer realm=\"api\", error=\"invalid_token\""]

    func machine(covering origins: [String] = ["https://h.test"]) throws -> TaskStateMachine {
        var configuration = SessionConfiguration.default
        configuration.bearerAuthentication = try BearerAuthentication(origins: origins, authenticator: NoTokens())
        let request = HTTPRequest(url: Self.page)
        return TaskStateMachine(
            request: request,
            origin: Origin(request.url)!,
            target: RequestHead.target(of: request.url),
            settings: TaskStateMachine.Settings(configuration),
            task: SessionTask(request: request, delegate: nil),
            hasTaskDelegate: false,
            hasSessionDelegate: false
        )
    }

    func routing(_ token: String, _ generation: Int = 0) -> TaskStateMachine.Routing {
        var routing = TaskStateMachine.Routing(route: .direct)
        routing.bearerToken = IssuedToken(value: token, generation: generation)
        return routing
    }

    func response(_ status: Int, _ headers: HTTPHeaders = [:]) -> HTTPResponse {
        HTTPResponse(status: status, reason: "", headers: headers, url: Self.page)
    }

    @Test func aRefusedTokenIsRefreshedOnceThenTheAnswerIsDelivered() throws {
        var machine = try machine()
        #expect(machine.wantsBearerToken)
        _ = machine.start()
        guard case .send(let first) = machine.routed(routing("old")) else {
            Issue.record("no send")
            return
        }
        #expect(first.request.headers["Authorization"] == "Bearer old")
        guard case .refreshToken(let rejected) = machine.responseHead(response(401, Self.refused)) else {
            Issue.record("no refresh")
            return
        }
        #expect(rejected == IssuedToken(value: "old", generation: 0))
        guard case .route = machine.tokenRefreshed() else {
            Issue.record("no route")
            return
        }
        guard case .send(let second) = machine.routed(routing("new", 1)) else {
            Issue.record("no send")
            return
        }
        #expect(second.request.headers["Authorization"] == "Bearer new")
        guard case .deliver(let delivered, _) = machine.responseHead(response(401, Self.refused)) else {
            Issue.record("the second refusal was not delivered")
            return
        }
        #expect(delivered.status == 401)
    }

    @Test func anotherOriginGetsNoToken() throws {
        var machine = try machine(covering: ["https://other.test"])
        #expect(!machine.wantsBearerToken)
        _ = machine.start()
        guard case .send(let exchange) = machine.routed(routing("old")) else {
            Issue.record("no send")
            return
        }
        #expect(exchange.request.headers["Authorization"] == nil)
    }

    @Test func aRefusalThatIsNotATokenFailureGoesToTheChallengeRules() throws {
        var machine = try machine()
        _ = machine.start()
        _ = machine.routed(routing("old"))
        let scope: HTTPHeaders = ["WWW-Authenticate": "Bearer realm=\"api\", error=\"insufficient_scope\""]
        if case .refreshToken = machine.responseHead(response(401, scope)) {
            Issue.record("insufficient_scope refreshed the token")
        }
    }
}
