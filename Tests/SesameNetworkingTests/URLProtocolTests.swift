import SesameNetworking
import SesameTesting
import Testing

/// The stub protocol apps write for their tests: a handler decides each response.
class MockURLProtocol: URLProtocol {
    static var requestHandler: ((URLRequest) throws -> (HTTPURLResponse, Data))?
    static var stopped = 0

    override class func canInit(with request: URLRequest) -> Bool { request.url?.host == "api.example.com" }

    override class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    override func startLoading() {
        guard let handler = MockURLProtocol.requestHandler else {
            client?.urlProtocol(self, didFailWithError: URLError(.badServerResponse))
            return
        }
        do {
            let (response, data) = try handler(request)
            client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
            client?.urlProtocol(self, didLoad: data)
            client?.urlProtocolDidFinishLoading(self)
        } catch {
            client?.urlProtocol(self, didFailWithError: error)
        }
    }

    override func stopLoading() { MockURLProtocol.stopped += 1 }
}

/// A protocol that never answers until it is stopped.
class SilentProtocol: URLProtocol {
    static let stops = Lines()
    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == "silent" }
    override func startLoading() {}
    override func stopLoading() { SilentProtocol.stops.append(request.url!.absoluteString) }
}

/// A logging protocol that passes requests on to the network once, marking them so that it does
/// not take them twice (the `property(forKey:in:)` idiom), and redirects `/old` to the server.
class RedirectingProtocol: URLProtocol {
    static let handledKey = "RedirectingProtocolHandled"
    static var target = ""
    override class func canInit(with request: URLRequest) -> Bool {
        request.url?.path == "/old" && URLProtocol.property(forKey: handledKey, in: request) == nil
    }
    override func startLoading() {
        let mutable = (request as NSURLRequest).mutableCopy() as! NSMutableURLRequest
        URLProtocol.setProperty(true, forKey: RedirectingProtocol.handledKey, in: mutable)
        mutable.url = URL(string: RedirectingProtocol.target)
        let response = HTTPURLResponse(
            url: request.url!,
            statusCode: 302,
            httpVersion: "HTTP/1.1",
            headerFields: ["Location": RedirectingProtocol.target]
        )!
        client?.urlProtocol(self, wasRedirectedTo: mutable as URLRequest, redirectResponse: response)
    }
    override func stopLoading() {}
}

/// A protocol that asks for a credential itself and answers as its sender is told.
class ChallengingProtocol: URLProtocol, URLAuthenticationChallengeSender {
    override class func canInit(with request: URLRequest) -> Bool { request.url?.scheme == "https" }
    override func startLoading() {
        let space = URLProtectionSpace(
            host: "api.example.com",
            port: 443,
            protocol: NSURLProtectionSpaceHTTPS,
            realm: "stub",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )
        let challenge = URLAuthenticationChallenge(
            protectionSpace: space,
            proposedCredential: nil,
            previousFailureCount: 0,
            failureResponse: nil,
            error: nil,
            sender: self
        )
        client?.urlProtocol(self, didReceive: challenge)
    }
    override func stopLoading() {}

    func respond(_ status: Int, _ body: String) {
        let response = HTTPURLResponse(url: request.url!, statusCode: status, httpVersion: nil, headerFields: nil)!
        client?.urlProtocol(self, didReceive: response, cacheStoragePolicy: .notAllowed)
        client?.urlProtocol(self, didLoad: Data(body.utf8))
        client?.urlProtocolDidFinishLoading(self)
    }
    func use(_ credential: URLCredential, for challenge: URLAuthenticationChallenge) {
        respond(200, "signed in as \(credential.user ?? "")")
    }
    func continueWithoutCredential(for challenge: URLAuthenticationChallenge) { respond(401, "anonymous") }
    func cancel(_ challenge: URLAuthenticationChallenge) {
        client?.urlProtocol(self, didFailWithError: URLError(.userCancelledAuthentication))
    }
    func performDefaultHandling(for challenge: URLAuthenticationChallenge) { respond(401, "default") }
    func rejectProtectionSpaceAndContinue(with challenge: URLAuthenticationChallenge) { respond(401, "rejected") }
}

class StubLogin: NSObject, URLSessionTaskDelegate {
    func urlSession(
        _ session: URLSession,
        task: URLSessionTask,
        didReceive challenge: URLAuthenticationChallenge,
        completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
    ) {
        #expect(challenge.protectionSpace.realm == "stub")
        completionHandler(.useCredential, URLCredential(user: "ada", password: "pw", persistence: .none))
    }
}

@Suite(.serialized) struct URLProtocolTests {
    func stubbedSession(delegate: URLSessionDelegate? = nil) -> URLSession {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [MockURLProtocol.self]
        return URLSession(configuration: configuration, delegate: delegate, delegateQueue: nil)
    }

    @Test func aStubAnswersTheAsyncAndCompletionHandlerFormsAndTheNetworkIsNotAsked() async throws {
        MockURLProtocol.requestHandler = { request in
            #expect(request.value(forHTTPHeaderField: "Authorization") == "Bearer t0ken")
            let response = HTTPURLResponse(
                url: request.url!,
                statusCode: 200,
                httpVersion: "HTTP/1.1",
                headerFields: ["Content-Type": "application/json"]
            )!
            return (response, Data(#"{"name":"ada"}"#.utf8))
        }
        defer { MockURLProtocol.requestHandler = nil }
        var request = URLRequest(url: URL(string: "https://api.example.com/user")!)
        request.setValue("Bearer t0ken", forHTTPHeaderField: "Authorization")
        let session = stubbedSession()

        let (data, response) = try await session.data(for: request)
        #expect(String(decoding: data, as: UTF8.self) == #"{"name":"ada"}"#)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "Content-Type") == "application/json")

        let loaded = await load(session, request)
        #expect(loaded.response?.statusCode == 200)
        #expect(loaded.data.map { String(decoding: $0, as: UTF8.self) } == #"{"name":"ada"}"#)
        #expect(loaded.error == nil)
    }

    @Test func aStubsFailureReachesTheCallerAsItWasGiven() async throws {
        struct Offline: Error {}
        MockURLProtocol.requestHandler = { _ in throw URLError(.notConnectedToInternet) }
        defer { MockURLProtocol.requestHandler = nil }
        let loaded = await load(stubbedSession(), URLRequest(url: URL(string: "https://api.example.com/")!))
        #expect((loaded.error as? URLError)?.code == .notConnectedToInternet)
        #expect(loaded.data == nil)
    }

    /// Response, data and completion reach a data delegate in order, as from the network.
    class Events: NSObject, URLSessionDataDelegate {
        let lines = Lines()
        var done: CheckedContinuation<Void, Never>?
        func urlSession(
            _ session: URLSession,
            dataTask: URLSessionDataTask,
            didReceive response: URLResponse,
            completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
        ) {
            lines.append("response \((response as? HTTPURLResponse)?.statusCode ?? 0)")
            completionHandler(.allow)
        }
        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            lines.append("data \(data.count)")
        }
        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            lines.append("complete \(error == nil)")
            done?.resume()
        }
    }

    @Test func aDelegateHearsAStubbedLoadAsItHearsTheNetwork() async throws {
        MockURLProtocol.requestHandler = { request in
            (HTTPURLResponse(url: request.url!, statusCode: 201, httpVersion: nil, headerFields: nil)!, Data(count: 5))
        }
        defer { MockURLProtocol.requestHandler = nil }
        let events = Events()
        let session = stubbedSession(delegate: events)
        await withCheckedContinuation { continuation in
            events.done = continuation
            session.dataTask(with: URL(string: "https://api.example.com/items")!).resume()
        }
        #expect(events.lines.all == ["response 201", "data 5", "complete true"])
    }

    @Test func aRequestNoProtocolTakesGoesToTheNetwork() async throws {
        let origin = try server { _ in .text("from the network") }
        defer { origin.shutdown() }
        let (data, _) = try await stubbedSession().data(from: URL(string: origin.baseURL + "/")!)
        #expect(String(decoding: data, as: UTF8.self) == "from the network")
    }

    @Test func registeredClassesServeTheSharedSessionOnly() async throws {
        let origin = try server { _ in .text("network") }
        defer { origin.shutdown() }
        RedirectingProtocol.target = origin.baseURL + "/new"
        #expect(URLProtocol.registerClass(RedirectingProtocol.self))
        #expect(!URLProtocol.registerClass(NSObject.self))
        defer { URLProtocol.unregisterClass(RedirectingProtocol.self) }

        // Shared: the protocol redirects /old to the server's /new, which the network loads.
        let (data, response) = try await URLSession.shared.data(from: URL(string: origin.baseURL + "/old")!)
        #expect(String(decoding: data, as: UTF8.self) == "network")
        #expect(response.url?.path == "/new")
        #expect(origin.requests.map(\.target) == ["/new"])

        // A session of its own asks only its configuration's classes: the network loads /old.
        _ = try await URLSession(configuration: .ephemeral).data(from: URL(string: origin.baseURL + "/old")!)
        #expect(origin.requests.map(\.target) == ["/new", "/old"])
    }

    @Test func cancellingAStubbedTaskStopsItsProtocolAndCompletesOnce() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [SilentProtocol.self]
        let session = URLSession(configuration: configuration)
        let calls = Lines()
        let task = session.dataTask(with: URL(string: "silent://host/wait")!) { _, _, error in
            calls.append("\((error as? URLError)?.code == .cancelled)")
        }
        task.resume()
        task.cancel()
        task.cancel()
        try #require(await calls.reached(1, within: .seconds(60)))
        try await Task.sleep(nanoseconds: 20_000_000)  // time for a wrong second call to show
        #expect(calls.all == ["true"])
        #expect(SilentProtocol.stops.all == ["silent://host/wait"])
        #expect(task.state == .completed)
    }

    @Test func aChallengeAProtocolMakesIsAnsweredByTheDelegatesThroughItsSender() async throws {
        let configuration = URLSessionConfiguration.ephemeral
        configuration.protocolClasses = [ChallengingProtocol.self]
        let url = URL(string: "https://api.example.com/me")!

        let answered = URLSession(configuration: configuration, delegate: StubLogin(), delegateQueue: nil)
        let (data, _) = try await answered.data(from: url)
        #expect(String(decoding: data, as: UTF8.self) == "signed in as ada")

        // No delegate method: default handling, through the same sender.
        let (unanswered, response) = try await URLSession(configuration: configuration).data(from: url)
        #expect(String(decoding: unanswered, as: UTF8.self) == "default")
        #expect((response as? HTTPURLResponse)?.statusCode == 401)
    }
}
