import Foundation
import SesameTesting
import Testing

@testable import Sesame

@Suite struct RedirectTests {
    static let credentials: [(String, String)] = [
        ("Authorization", "Basic dXNlcjpwYXNz"), ("Cookie", "session=secret"),
        ("Proxy-Authorization", "Basic cHJveHk="),
    ]

    func request(_ url: URL, method: String = "GET", body: HTTPBody? = nil) -> HTTPRequest {
        var request = HTTPRequest(url: url, method: method, body: body)
        for (name, value) in Self.credentials { request.headers.add(name: name, value: value) }
        return request
    }

    @Test func credentialsStayOnTheSameOrigin() async throws {
        let origin = try server { request in
            request.target == "/start" ? .redirect(302, to: "/end") : .text("end")
        }
        defer { origin.shutdown() }
        let (data, response) = try await testSession().data(for: request(url(origin, "/start")))
        #expect(String(decoding: data, as: UTF8.self) == "end")
        #expect(response.url.path == "/end")
        let final = try #require(origin.requests.last)
        #expect(final.headers["Authorization"] == "Basic dXNlcjpwYXNz")
        #expect(final.headers["Cookie"] == "session=secret")
        // Proxy credentials go only to a forwarding proxy, never to an origin.
        #expect(origin.requests.allSatisfy { $0.headers["Proxy-Authorization"] == nil })
    }

    @Test(arguments: ["port", "host", "scheme"])
    func credentialsAreDroppedWhenTheOriginChanges(change: String) async throws {
        let target = try server(tls: change == "scheme") { _ in .text("elsewhere") }
        defer { target.shutdown() }
        let destination: String
        switch change {
        case "host": destination = "http://127.0.0.1:\(target.port)/landed"
        default: destination = target.baseURL + "/landed"
        }
        let origin = try server { _ in .redirect(307, to: destination) }
        defer { origin.shutdown() }
        let (data, _) = try await testSession().data(for: request(url(origin, "/start")))
        #expect(String(decoding: data, as: UTF8.self) == "elsewhere")
        let landed = try #require(target.requests.first)
        for (name, _) in Self.credentials { #expect(landed.headers[name] == nil, "\(name) leaked to \(destination)") }
        // The first origin did get them.
        #expect(origin.requests.first?.headers["authorization"] != nil)
    }

    @Test(arguments: [(301, "GET"), (302, "GET"), (303, "GET"), (307, "POST"), (308, "POST")])
    func methodRules(status: Int, expected: String) async throws {
        let origin = try server { request in
            request.target == "/form"
                ? .redirect(status, to: "/result") : .text("\(request.method) \(request.body.count)")
        }
        defer { origin.shutdown() }
        let post = request(url(origin, "/form"), method: "POST", body: .data(Data("a=1".utf8)))
        let (data, _) = try await testSession().data(for: post)
        #expect(String(decoding: data, as: UTF8.self) == "\(expected) \(expected == "POST" ? 3 : 0)")
    }

    @Test func theRedirectLimitIsEnforced() async throws {
        let origin = try server { request in .redirect(302, to: "/loop\(request.number)") }
        defer { origin.shutdown() }
        let session = testSession { $0.maximumRedirects = 5 }
        let error = await #expect(throws: SesameError.self) { _ = try await session.data(from: url(origin, "/loop")) }
        #expect(error?.code == .tooManyRedirects)
        #expect(origin.requests.count == 6)
    }

    @Test func redirectsCanBeTurnedOff() async throws {
        let origin = try server { _ in .redirect(302, to: "/elsewhere") }
        defer { origin.shutdown() }
        let session = testSession { $0.followsRedirects = false }
        let (_, response) = try await session.data(from: url(origin, "/"))
        #expect(response.status == 302)
        #expect(response.headers["location"] == "/elsewhere")
    }

    final class RedirectDelegate: SessionTaskDelegate {
        let refuse: Bool
        let seen = Recorder<String>()
        init(refuse: Bool) { self.refuse = refuse }
        func session(
            _ session: Session,
            task: SessionTask,
            willPerformHTTPRedirection response: HTTPResponse,
            newRequest: HTTPRequest
        ) async -> HTTPRequest? {
            seen.append("\(response.status) -> \(newRequest.url.path)")
            guard !refuse else { return nil }
            var changed = newRequest
            changed.url = URL(
                string: newRequest.url.absoluteString.replacingOccurrences(of: "/next", with: "/changed")
            )!
            return changed
        }
    }

    @Test(arguments: [false, true])
    func theDelegateCanChangeOrRefuseARedirect(refuse: Bool) async throws {
        let origin = try server { request in request.target == "/" ? .redirect(301, to: "/next") : .text(request.target)
        }
        defer { origin.shutdown() }
        let delegate = RedirectDelegate(refuse: refuse)
        let (data, response) = try await testSession().data(from: url(origin, "/"), delegate: delegate)
        #expect(delegate.seen.all == ["301 -> /next"])
        if refuse {
            #expect(response.status == 301)
        } else {
            #expect(String(decoding: data, as: UTF8.self) == "/changed")
        }
    }

    @Test func aDelegateCannotPutCredentialsBackForAnotherOrigin() async throws {
        let target = try server { _ in .text("other") }
        defer { target.shutdown() }
        let origin = try server { _ in .redirect(302, to: target.baseURL + "/x") }
        defer { origin.shutdown() }
        final class Sneaky: SessionTaskDelegate {
            func session(
                _ session: Session,
                task: SessionTask,
                willPerformHTTPRedirection response: HTTPResponse,
                newRequest: HTTPRequest
            ) async -> HTTPRequest? {
                var request = newRequest
                request.headers.add(name: "Authorization", value: "Basic c25lYWt5")
                return request
            }
        }
        _ = try await testSession().data(for: request(url(origin, "/")), delegate: Sneaky())
        #expect(target.requests.first?.headers["authorization"] == nil)
    }

    @Test func policyIsAPureFunction() throws {
        let start = URL(string: "https://a.example/x")!
        let response = HTTPResponse(status: 302, reason: "", headers: ["Location": "//b.example/y"], url: start)
        let next = try #require(RedirectPolicy.nextRequest(after: response, for: request(start)))
        #expect(next.url.absoluteString == "https://b.example/y")
        #expect(!next.headers.contains("Authorization"))
        let streamed = HTTPRequest(url: start, method: "PUT", body: .stream(AsyncStream { $0.finish() }))
        let temporary = HTTPResponse(status: 307, reason: "", headers: ["Location": "/z"], url: start)
        #expect(RedirectPolicy.nextRequest(after: temporary, for: streamed) == nil)
        let toFile = HTTPResponse(status: 302, reason: "", headers: ["Location": "file:///etc/passwd"], url: start)
        #expect(RedirectPolicy.nextRequest(after: toFile, for: request(start)) == nil)
    }
}
