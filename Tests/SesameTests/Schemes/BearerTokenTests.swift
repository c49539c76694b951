import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Bearer tokens through sessions against ``BearerTokenGate`` on loopback: one refresh for many
/// refused requests, a failed refresh failing each of them once, no loop, no token elsewhere.
@Suite struct BearerTokenTests {
    /// The test's authenticator: the gate's token to start with, a refresh that waits until the
    /// server has refused `refusalsBeforeRefresh` requests (so that every request of a burst is
    /// refused before the refresh ends), then issues a new token or throws.
    final class Authenticator: TokenAuthenticator {
        let gate: BearerTokenGate
        let initial: String?
        let refusals: ArrivalCounter?
        let refusalsBeforeRefresh: Int
        let fails: Bool
        let refreshes = Recorder<String?>()

        init(
            gate: BearerTokenGate,
            initial: String?,
            refusals: ArrivalCounter? = nil,
            refusalsBeforeRefresh: Int = 0,
            fails: Bool = false
        ) {
            self.gate = gate
            self.initial = initial
            self.refusals = refusals
            self.refusalsBeforeRefresh = refusalsBeforeRefresh
            self.fails = fails
        }

        func currentToken() async throws -> String? { initial }

        func refreshToken(rejecting rejected: String?) async throws -> String {
            refreshes.append(rejected)
            if let refusals { _ = await refusals.reached(refusalsBeforeRefresh, within: .seconds(10)) }
            if fails { throw TokenEndpointError() }
            return gate.issue()
        }
    }

    struct TokenEndpointError: Error, CustomStringConvertible {
        var description: String { "the token endpoint answered 400 invalid_grant" }
    }

    /// A plain-HTTP server behind `gate`; each connection holds its answer until `barrier`
    /// requests have arrived, so that a burst reaches the server before any answer does.
    /// `refusals` counts the 401s it sends.
    func server(_ gate: BearerTokenGate, barrier: Int = 0, refusals: ArrivalCounter? = nil) throws -> LocalServer {
        let arrived = ArrivalCounter()
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { request in
            arrived.arrive()
            _ = arrived.waitOnThread(until: barrier, within: .seconds(10))
            guard let refusal = gate.check(request) else { return .text("hello") }
            refusals?.arrive()
            return refusal
        }
        return try LocalServer(configuration)
    }

    func session(
        for origin: LocalServer,
        _ authenticator: Authenticator,
        events: Recorder<SessionEvent>? = nil
    ) throws -> Session {
        var configuration = SessionConfiguration.default
        configuration.proxy = .none
        configuration.maximumConnectionsPerHost = 64
        configuration.credentialStorage = nil
        configuration.bearerAuthentication = try BearerAuthentication(
            origins: ["http://127.0.0.1:\(origin.port)"],
            authenticator: authenticator
        )
        if let events { configuration.eventObserver = { events.append($0) } }
        return Session(configuration: configuration)
    }

    func url(_ origin: LocalServer, _ path: String = "/") -> URL {
        URL(string: "http://127.0.0.1:\(origin.port)\(path)")!
    }

    /// 64 requests about to go out with an expired token, to a server that answers none of them
    /// before all 64 arrived, and a refresh that waits until the server refused all 64.
    struct ExpiredTokenBurst {
        let gate: BearerTokenGate
        let expired: String
        let origin: LocalServer
        let authenticator: Authenticator
        let events: Recorder<SessionEvent>
        let session: Session
    }

    func expiredTokenBurst(refreshFails: Bool) throws -> ExpiredTokenBurst {
        let gate = BearerTokenGate(realm: "api")
        let expired = gate.issue()
        gate.expire()
        let refusals = ArrivalCounter()
        let origin = try server(gate, barrier: 64, refusals: refusals)
        let authenticator = Authenticator(
            gate: gate,
            initial: expired,
            refusals: refusals,
            refusalsBeforeRefresh: 64,
            fails: refreshFails
        )
        let events = Recorder<SessionEvent>()
        let session = try session(for: origin, authenticator, events: events)
        return ExpiredTokenBurst(
            gate: gate,
            expired: expired,
            origin: origin,
            authenticator: authenticator,
            events: events,
            session: session
        )
    }

    @Test func sixtyFourRequestsWithAnExpiredTokenCauseOneRefresh() async throws {
        let burst = try expiredTokenBurst(refreshFails: false)
        let (gate, expired, origin, authenticator, events, session) = (
            burst.gate, burst.expired, burst.origin, burst.authenticator, burst.events, burst.session
        )
        defer { origin.shutdown() }
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<64 { group.addTask { try await session.data(from: url(origin)).1.status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 64))
        #expect(authenticator.refreshes.all == [expired])
        #expect(gate.refusedCount == 64)
        #expect(gate.acceptedCount == 64)
        let refreshed = events.all.compactMap { event -> Int? in
            if case .tokenRefreshed(_, let waiting) = event { return waiting }
            return nil
        }
        // One refresh, which the requests refused while it ran waited for (the others were
        // answered from its outcome when their 401 came after it).
        #expect(refreshed.count == 1)
        #expect((1...64).contains(refreshed.first ?? 0))
    }

    @Test func aFailedRefreshFailsEachWaitingRequestOnce() async throws {
        let burst = try expiredTokenBurst(refreshFails: true)
        let (gate, origin, authenticator, events, session) = (
            burst.gate, burst.origin, burst.authenticator, burst.events, burst.session
        )
        defer { origin.shutdown() }
        let failures = await withTaskGroup(of: SesameError?.self) { group in
            for _ in 0..<64 {
                group.addTask {
                    do {
                        _ = try await session.data(from: url(origin))
                        return nil
                    } catch {
                        return error as? SesameError
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(failures.count == 64)
        #expect(failures.allSatisfy { $0?.code == .serverAuthenticationFailed })
        #expect(failures.first??.detail.contains("invalid_grant") == true)
        #expect(authenticator.refreshes.all.count == 1)
        #expect(gate.refusedCount == 64)  // no request went again
        let failed = events.all.filter {
            if case .tokenRefreshFailed = $0 { return true }
            return false
        }
        #expect(failed.count == 1)
    }

    @Test func noTokenYetMeansOneRefreshBeforeTheFirstRequest() async throws {
        let gate = BearerTokenGate(realm: "api")
        let origin = try server(gate)
        defer { origin.shutdown() }
        let authenticator = Authenticator(gate: gate, initial: nil)
        let session = try session(for: origin, authenticator)
        for _ in 0..<3 {
            let (data, _) = try await session.data(from: url(origin))
            #expect(String(decoding: data, as: UTF8.self) == "hello")
        }
        #expect(authenticator.refreshes.all == [nil])
        #expect(gate.refusedCount == 0)
    }

    @Test func aServerThatRefusesEveryTokenGetsOneRefreshAndItsAnswerDelivered() async throws {
        let gate = BearerTokenGate(realm: "api")
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { _ in
            .text("no", status: 401, headers: [("WWW-Authenticate", "Bearer realm=\"api\", error=\"invalid_token\"")])
        }
        let origin = try LocalServer(configuration)
        defer { origin.shutdown() }
        let authenticator = Authenticator(gate: gate, initial: "first")
        let (_, response) = try await session(for: origin, authenticator).data(from: url(origin))
        #expect(response.status == 401)
        #expect(authenticator.refreshes.all == ["first"])
        #expect(origin.requests.count == 2)
    }

    @Test func otherRefusalsAreNotTokenFailures() {
        func response(_ challenge: String?, status: Int = 401) -> HTTPResponse {
            var headers = HTTPHeaders()
            if let challenge { headers.add(name: "WWW-Authenticate", value: challenge) }
            return HTTPResponse(status: status, reason: "", headers: headers, url: URL(string: "https://a.test/")!)
        }
        #expect(BearerAuthentication.isTokenFailure(response(nil)))
        #expect(BearerAuthentication.isTokenFailure(response("Bearer realm=\"x\"")))
        #expect(BearerAuthentication.isTokenFailure(response("Bearer error=\"invalid_token\"")))
        #expect(!BearerAuthentication.isTokenFailure(response("Bearer error=\"insufficient_scope\"")))
        #expect(!BearerAuthentication.isTokenFailure(response("Bearer error=\"invalid_request\"")))
        #expect(!BearerAuthentication.isTokenFailure(response("Basic realm=\"x\"")))
        #expect(!BearerAuthentication.isTokenFailure(response("Bearer error=\"invalid_token\"", status: 403)))
    }

    @Test func theTokenNeverGoesToAnotherOrigin() async throws {
        let gate = BearerTokenGate(realm: "api")
        let token = gate.issue()
        var elsewhereConfiguration = LocalServer.Configuration.plainHTTP
        elsewhereConfiguration.handler = { request in .text(request.headers["authorization"] ?? "none") }
        let elsewhere = try LocalServer(elsewhereConfiguration)
        defer { elsewhere.shutdown() }
        var apiConfiguration = LocalServer.Configuration.plainHTTP
        apiConfiguration.handler = { request in
            gate.check(request) ?? .redirect(302, to: "http://127.0.0.1:\(elsewhere.port)/landing")
        }
        let api = try LocalServer(apiConfiguration)
        defer { api.shutdown() }
        let session = try session(for: api, Authenticator(gate: gate, initial: token))
        let (data, _) = try await session.data(from: url(api))
        #expect(String(decoding: data, as: UTF8.self) == "none")
        // Nor to the same host on another port, asked directly.
        let (direct, _) = try await session.data(from: url(elsewhere))
        #expect(String(decoding: direct, as: UTF8.self) == "none")
        #expect(gate.acceptedCount == 1)
    }

    @Test func aRequestsOwnAuthorizationIsKept() async throws {
        let gate = BearerTokenGate(realm: "api")
        let token = gate.issue()
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { request in .text(request.headers["authorization"] ?? "none") }
        let origin = try LocalServer(configuration)
        defer { origin.shutdown() }
        let session = try session(for: origin, Authenticator(gate: gate, initial: token))
        let own = HTTPRequest(url: url(origin), headers: ["Authorization": "Bearer mine"])
        let (data, _) = try await session.data(for: own)
        #expect(String(decoding: data, as: UTF8.self) == "Bearer mine")
    }

    @Test func originsMustBeOrigins() {
        let authenticator = Authenticator(gate: BearerTokenGate(realm: "x"), initial: nil)
        for bad in [
            "api.example.test", "ftp://a.test", "https://user@a.test", "https://a.test/v1", "https://a.test/?q",
        ] {
            #expect(throws: SesameError.self) { try BearerAuthentication(origins: [bad], authenticator: authenticator) }
        }
        let good = try? BearerAuthentication(origins: ["HTTPS://API.example.test:443/"], authenticator: authenticator)
        #expect(good?.origins == ["https://api.example.test"])
    }

    @Test func aTokenThatCouldBreakTheHeaderIsRefused() async throws {
        let gate = BearerTokenGate(realm: "api")
        let origin = try server(gate)
        defer { origin.shutdown() }
        let session = try session(for: origin, Authenticator(gate: gate, initial: "abc\r\nX-Injected: 1"))
        let error = await #expect(throws: SesameError.self) { try await session.data(from: url(origin)) }
        #expect(error?.code == .serverAuthenticationFailed)
        #expect(origin.requests.isEmpty)
    }
}
