import FoundationEssentials
import Sesame
import SesameTesting

/// The demo's Bearer step: an API whose token has expired, a token endpoint, and a
/// `TokenAuthenticator` that asks it for a new token once, however many requests were refused.
enum DemoBearerSteps {
    /// The app's side: the token it holds, and a refresh that posts to the token endpoint.
    final class EndpointTokens: TokenAuthenticator {
        let endpoint: URL
        let session: Session
        let held: LockedValue<String>
        let refreshes = Recorder<String?>()

        init(endpoint: URL, session: Session, holding token: String) {
            self.endpoint = endpoint
            self.session = session
            held = LockedValue(token)
        }

        func currentToken() async throws -> String? { held.withLock { $0 } }

        func refreshToken(rejecting rejected: String?) async throws -> String {
            refreshes.append(rejected)
            let request = HTTPRequest(
                url: endpoint,
                method: "POST",
                headers: ["Content-Type": "application/x-www-form-urlencoded"],
                body: .data(Data("grant_type=refresh_token&refresh_token=demo-refresh".utf8))
            )
            let (data, response) = try await session.data(for: request)
            guard response.status == 200, let token = try? JSONDecoder().decode(Grant.self, from: data).accessToken
            else {
                throw DemoFailure(
                    "the token endpoint answered \(response.status) \(String(decoding: data, as: UTF8.self))"
                )
            }
            held.withLock { $0 = token }
            return token
        }
    }

    /// The token endpoint's answer (RFC 6749 section 5.1), the one field the app reads.
    struct Grant: Decodable {
        let accessToken: String
        enum CodingKeys: String, CodingKey { case accessToken = "access_token" }
    }

    static func bearer(_ demo: DemoContext) async throws {
        let gate = BearerTokenGate(realm: "Sesame API")
        let expired = gate.issue()
        gate.expire()
        let grants = LockedValue("demo-refresh")
        var configuration = LocalServer.Configuration(identity: try demo.pki.leaf())
        configuration.handler = { request in
            guard request.target == "/oauth/token" else { return gate.check(request) ?? .text("report for the bearer") }
            guard String(decoding: request.body, as: UTF8.self).contains("refresh_token=\(grants.withLock { $0 })")
            else {
                return .text(
                    "{\"error\":\"invalid_grant\"}",
                    status: 400,
                    headers: [("Content-Type", "application/json")]
                )
            }
            return .text(
                "{\"access_token\":\"\(gate.issue())\",\"token_type\":\"Bearer\",\"expires_in\":3600}",
                headers: [("Content-Type", "application/json")]
            )
        }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let origin = "https://localhost:\(server.port)"
        var plain = SessionConfiguration.default
        plain.tls = demo.privateAnchorConfiguration
        let tokens = EndpointTokens(
            endpoint: try demo.url(port: server.port, path: "/oauth/token"),
            session: Session(configuration: plain),
            holding: expired
        )
        var api = plain
        api.bearerAuthentication = try BearerAuthentication(origins: [origin], authenticator: tokens)
        api.eventObserver = { event in
            switch event {
            case .tokenRefreshed(let origin, let waiting):
                demo.say("token for \(origin) refreshed; \(waiting) refused request(s) waited for it")
            case .tokenRefreshFailed(let origin, let error):
                demo.say("token refresh for \(origin) failed: \(error)")
            default:
                break
            }
        }
        let session = Session(configuration: api)
        let url = try demo.url(port: server.port, path: "/reports/today")

        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<16 { group.addTask { try await session.data(from: url).1.status } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        demo.say("16 requests with an expired token: \(statuses.filter { $0 == 200 }.count) answered 200")
        demo.say(
            "refreshes: \(tokens.refreshes.all.count); the API refused \(gate.refusedCount), accepted \(gate.acceptedCount)"
        )
        try expect(statuses.allSatisfy { $0 == 200 }, "statuses \(statuses)")
        try expect(tokens.refreshes.all.count == 1, "\(tokens.refreshes.all.count) refreshes")

        // The refresh token is revoked and the access token expires: each waiting request fails once.
        grants.withLock { $0 = "revoked" }
        gate.expire()
        let failures = await withTaskGroup(of: String?.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    do {
                        _ = try await session.data(from: url)
                        return nil
                    } catch {
                        return "\(error)"
                    }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        demo.say("8 requests after the refresh token was revoked: \(failures.compactMap { $0 }.count) failed")
        try expect(failures.allSatisfy { $0 != nil }, "a request succeeded without a token")
        try expect(tokens.refreshes.all.count == 2, "\(tokens.refreshes.all.count) refreshes in all")
    }
}
