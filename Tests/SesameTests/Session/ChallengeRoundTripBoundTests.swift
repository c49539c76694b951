import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Servers and proxies that challenge forever, each time under a protection space not seen before:
/// the per-space failure limit never trips, so the task's own bound on round trips ends them.
@Suite struct ChallengeRoundTripBoundTests {
    /// Answers every request with a challenge under a realm (and nonce) it never used before.
    func endlessServer(status: Int, header: String, scheme: @escaping @Sendable (Int) -> String) throws -> LocalServer {
        let counter = LockedValue(0)
        return try server { _ in
            let count = counter.withLock { value -> Int in
                value += 1
                return value
            }
            return .text("no", status: status, headers: [(header, scheme(count))])
        }
    }

    @Test(arguments: ["basic", "digest-stale"])
    func aServerNamingANewSpaceEachTimeGetsAtMostTheBound(kind: String) async throws {
        let origin = try endlessServer(status: 401, header: "WWW-Authenticate") { count in
            kind == "basic"
                ? "Basic realm=\"realm \(count)\""
                : "Digest realm=\"realm \(count)\", nonce=\"n\(count)\", qop=\"auth\", algorithm=SHA-256, stale=true"
        }
        defer { origin.shutdown() }
        let session = testSession { $0.maximumChallengeRoundTrips = 7 }
        let start = URL(string: "http://ada:s3cret@localhost:\(origin.port)/")!
        let (_, response) = try await session.data(from: start)
        #expect(response.status == 401)
        #expect(origin.requests.count == 8, "the first request and seven round trips")
    }

    @Test func theDefaultBoundIsTen() async throws {
        let origin = try endlessServer(status: 401, header: "WWW-Authenticate") { "Basic realm=\"realm \($0)\"" }
        defer { origin.shutdown() }
        let (_, response) = try await testSession().data(
            from: URL(string: "http://ada:s3cret@localhost:\(origin.port)/")!
        )
        #expect(response.status == 401)
        #expect(origin.requests.count == 11)
    }

    @Test func aForwardingProxyNamingANewRealmEachTimeGetsAtMostTheBound() async throws {
        let proxy = try endlessServer(status: 407, header: "Proxy-Authenticate") { "Basic realm=\"proxy \($0)\"" }
        defer { proxy.shutdown() }
        let session = testSession {
            $0.proxy = ProxyConfiguration(proxy: "http://user:pass@localhost:\(proxy.port)")
            $0.maximumChallengeRoundTrips = 5
        }
        let (_, response) = try await session.data(from: URL(string: "http://origin.invalid/")!)
        #expect(response.status == 407)
        #expect(proxy.requests.count == 6)
    }
}
