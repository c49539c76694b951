import SesameNetworking
import SesameTesting
import Testing

/// NSURLConnection as seeds 001 and 003 use it: callbacks on the run loop of the thread that made
/// the connection, challenges answered only through `challenge.sender`.
@Suite struct NSURLConnectionTests {
    /// What a connection delegate saw, in order. Each delegate below declares the conformance
    /// itself: without Objective-C, a method a subclass adds is not seen through a conformance
    /// its superclass declared (Migrating.md).
    class Recorder: NSObject {
        var events: [String] = []
        var data = Data()
        var finished = false
        var error: NSError?
        var onThread: Thread?
        var sameThread = true

        func note(_ event: String) {
            sameThread = sameThread && Thread.current === onThread
            events.append(event)
        }
        func connection(_ connection: NSURLConnection, didReceive response: URLResponse) {
            note("response \((response as? HTTPURLResponse)?.statusCode ?? 0)")
        }
        func connection(_ connection: NSURLConnection, didReceive data: Data) { self.data.append(data) }
        func connectionDidFinishLoading(_ connection: NSURLConnection) {
            note("finished")
            finished = true
        }
        func connection(_ connection: NSURLConnection, didFailWithError error: Error) {
            note("failed")
            self.error = error as NSError
            finished = true
        }
    }

    /// Seed 001's delegate: the challenge is answered through its sender only.
    class SenderAnswers: Recorder, NSURLConnectionDataDelegate {
        let reply: String
        init(_ reply: String) { self.reply = reply }

        func connection(_ connection: NSURLConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
            note("challenge \(challenge.previousFailureCount)")
            switch reply {
            case "use" where challenge.previousFailureCount == 0:
                challenge.sender?.use(
                    URLCredential(user: "ada", password: "s3cret", persistence: .none),
                    for: challenge
                )
            case "continue":
                challenge.sender?.continueWithoutCredential(for: challenge)
            default:
                challenge.sender?.cancel(challenge)
            }
        }
    }

    /// The legacy pair, for code older than `willSendRequestFor`.
    class LegacyPair: Recorder, NSURLConnectionDataDelegate {
        func connection(
            _ connection: NSURLConnection,
            canAuthenticateAgainstProtectionSpace protectionSpace: URLProtectionSpace
        ) -> Bool {
            protectionSpace.authenticationMethod == NSURLAuthenticationMethodHTTPBasic
        }
        func connection(_ connection: NSURLConnection, didReceive challenge: URLAuthenticationChallenge) {
            note("legacy challenge")
            challenge.sender?.use(URLCredential(user: "ada", password: "s3cret", persistence: .none), for: challenge)
        }
    }

    /// Makes the connection on a thread of its own and runs that thread's run loop until the
    /// delegate hears the end (bounded), as an app's main thread would.
    func run(_ delegate: Recorder, _ request: URLRequest) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let thread = Thread {
                delegate.onThread = Thread.current
                // An app's main run loop always has sources; with none, run(mode:before:) would
                // return at once and this loop would spin a processor.
                RunLoop.current.add(Timer(timeInterval: 0.05, repeats: true) { _ in }, forMode: .default)
                let connection = NSURLConnection(request: request, delegate: delegate)
                // Generous: with the whole suite starting at once on two processors, the first
                // requests here have waited 14 s for a turn (pure-compute tests take 8 s then).
                let deadline = Date(timeIntervalSinceNow: 60)
                while !delegate.finished && Date() < deadline {
                    _ = RunLoop.current.run(mode: .default, before: Date(timeIntervalSinceNow: 0.05))
                }
                _ = connection
                continuation.resume()
            }
            thread.start()
        }
    }

    func basicServer() throws -> LocalServer {
        let gate = BasicAuthGate(realm: "seed001", users: ["ada": "s3cret"])
        return try server { request in gate.check(request) ?? .text("welcome") }
    }

    @Test func aCredentialThroughTheSenderIsUsed() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let delegate = SenderAnswers("use")
        await run(delegate, URLRequest(url: URL(string: "http://127.0.0.1:\(origin.port)/private")!))
        #expect(delegate.events == ["challenge 0", "response 200", "finished"])
        #expect(String(data: delegate.data, encoding: .utf8) == "welcome")
        #expect(delegate.sameThread)
    }

    @Test func continuingWithoutACredentialDeliversThe401() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let delegate = SenderAnswers("continue")
        await run(delegate, URLRequest(url: URL(string: "http://127.0.0.1:\(origin.port)/private")!))
        #expect(delegate.events == ["challenge 0", "response 401", "finished"])
    }

    @Test func cancellingThroughTheSenderFailsWithUserCancelledAuthentication() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let delegate = SenderAnswers("cancel")
        await run(delegate, URLRequest(url: URL(string: "http://127.0.0.1:\(origin.port)/private")!))
        #expect(delegate.events == ["challenge 0", "failed"])
        #expect(delegate.error?.domain == NSURLErrorDomain)
        #expect(delegate.error?.code == NSURLErrorUserCancelledAuthentication)
    }

    @Test func theLegacyPairAnswersWhenWillSendIsMissing() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let delegate = LegacyPair()
        await run(delegate, URLRequest(url: URL(string: "http://127.0.0.1:\(origin.port)/private")!))
        #expect(delegate.events == ["legacy challenge", "response 200", "finished"])
    }

    /// Seed 003 in Swift: the server's trust evaluated against a bundled anchor through the sender;
    /// a GB18030 POST; the GB18030 JSON answer decoded in connectionDidFinishLoading.
    class Seed003: Recorder, NSURLConnectionDataDelegate {
        let anchor: Data
        var retString: String?
        init(anchor: Data) { self.anchor = anchor }

        func connection(_ connection: NSURLConnection, willSendRequestFor challenge: URLAuthenticationChallenge) {
            if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust {
                let trust = challenge.protectionSpace.serverTrust!
                var result = SecTrustResultType.invalid
                let certificate = SecCertificateCreateWithData(nil, anchor as CFData)!
                SecTrustSetAnchorCertificates(trust, [certificate] as CFArray)
                let status = SecTrustEvaluate(trust, &result)
                if status == errSecSuccess && (result == .proceed || result == .unspecified) {
                    let cred = URLCredential(trust: trust)
                    challenge.sender?.use(cred, for: challenge)
                } else {
                    challenge.sender?.cancel(challenge)
                }
            }
        }

        override func connectionDidFinishLoading(_ connection: NSURLConnection) {
            let enc = String.Encoding(
                rawValue: CFStringConvertEncodingToNSStringEncoding(
                    CFStringEncoding(CFStringEncodings.GB_18030_2000.rawValue)
                )
            )
            retString = NSString(data: data, encoding: enc.rawValue) as String?
            super.connectionDidFinishLoading(connection)
        }
    }

    @Test func seed003OverNSURLConnection() async throws {
        let gbk = String.Encoding(
            rawValue: CFStringConvertEncodingToNSStringEncoding(
                CFStringEncoding(CFStringEncodings.GB_18030_2000.rawValue)
            )
        )
        let posted = Lines()
        let origin = try server(tls: true) { request in
            posted.append(String(data: Data(request.body), encoding: gbk) ?? "?")
            return .bytes(
                [UInt8]("{\"状态\":\"好\"}".data(using: gbk)!),
                headers: [("Content-Type", "application/json; charset=gb18030")]
            )
        }
        defer { origin.shutdown() }
        var request = URLRequest(
            url: URL(string: origin.baseURL + "/")!,
            cachePolicy: .useProtocolCachePolicy,
            timeoutInterval: 240
        )
        request.httpMethod = "POST"
        request.httpShouldHandleCookies = true
        request.httpBody = "XX=中文&YY=XX".data(using: gbk)
        let delegate = Seed003(anchor: der(pki.root.certificatePEM))
        await run(delegate, request)
        #expect(delegate.events == ["response 200", "finished"])
        #expect(posted.all == ["XX=中文&YY=XX"])
        let object =
            try JSONSerialization.jsonObject(with: (delegate.retString ?? "").data(using: .utf8)!) as? [String: String]
        #expect(object?["状态"] == "好")

        // A connection already trusted is reused without a new handshake (as Apple's are): the
        // refusal is shown against a server not met before.
        let other = try server(tls: true) { _ in .text("never") }
        defer { other.shutdown() }
        request.url = URL(string: "https://127.0.0.1:\(other.port)/")!
        let stranger = Seed003(anchor: der(pki.untrustedRoot.certificatePEM))
        await run(stranger, request)
        #expect(stranger.events == ["failed"])
        #expect(stranger.error?.code == NSURLErrorUserCancelledAuthentication)
    }

    @Test func sendAsynchronousRequestCallsBackOnTheQueue() async throws {
        let origin = try server { _ in .text("async") }
        defer { origin.shutdown() }
        let queue = OperationQueue()
        let (text, onQueue): (String?, Bool) = await withCheckedContinuation { continuation in
            NSURLConnection.sendAsynchronousRequest(URLRequest(url: URL(string: origin.baseURL + "/")!), queue: queue) {
                response,
                data,
                error in
                continuation.resume(
                    returning: (data.flatMap { String(data: $0, encoding: .utf8) }, OperationQueue.current === queue)
                )
            }
        }
        #expect(text == "async")
        #expect(onQueue)
    }
}
