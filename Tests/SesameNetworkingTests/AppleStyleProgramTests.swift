import SesameNetworking
import SesameTesting
import Testing

/// Programs written the way Apple's documentation teaches ("Handling an authentication
/// challenge", "Performing manual server trust authentication"), with only the import changed.
@Suite struct AppleStyleProgramTests {
    /// Manual server trust evaluation at the task level only: Apple's rule sends server trust
    /// there when the session-level method is missing.
    class TaskLevelTrust: NSObject, URLSessionTaskDelegate {
        let anchor: SecCertificate
        var asked: [String] = []
        init(anchor: SecCertificate) { self.anchor = anchor }

        func urlSession(
            _ session: URLSession,
            task: URLSessionTask,
            didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            asked.append(challenge.protectionSpace.authenticationMethod)
            guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
                let serverTrust = challenge.protectionSpace.serverTrust
            else {
                completionHandler(.performDefaultHandling, nil)
                return
            }
            SecTrustSetAnchorCertificates(serverTrust, [anchor] as CFArray)
            SecTrustSetAnchorCertificatesOnly(serverTrust, true)
            var error: CFError?
            guard SecTrustEvaluateWithError(serverTrust, &error) else {
                completionHandler(.cancelAuthenticationChallenge, nil)
                return
            }
            completionHandler(.useCredential, URLCredential(trust: serverTrust))
        }
    }

    @Test func serverTrustReachesATaskLevelOnlyDelegate() async throws {
        let origin = try server(tls: true) { _ in .text("trusted") }
        defer { origin.shutdown() }
        let anchor = SecCertificateCreateWithData(nil, der(pki.root.certificatePEM) as CFData)!
        let delegate = TaskLevelTrust(anchor: anchor)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        let (data, response) = try await session.data(from: URL(string: origin.baseURL + "/")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(data: data, encoding: .utf8) == "trusted")
        #expect(delegate.asked == [NSURLAuthenticationMethodServerTrust])
    }

    @Test func anUntrustedServerWithNoDelegateIsServerCertificateUntrusted() async throws {
        let origin = try server(tls: true) { _ in .text("never") }
        defer { origin.shutdown() }
        let url = URL(string: origin.baseURL + "/")!
        do {
            _ = try await URLSession(configuration: .ephemeral).data(from: url)
            Issue.record("an untrusted server was accepted")
        } catch let error as URLError {
            #expect(error.code == .serverCertificateUntrusted)
            #expect((error as NSError).code == NSURLErrorServerCertificateUntrusted)
            #expect(error.failingURL == url)
        }
    }

    /// An intranet login as Apple's platforms take it: Negotiate answered with a user and password
    /// (a Kerberos ticket is acquired with it), everything else by default handling.
    class IntranetLogin: NSObject, URLSessionTaskDelegate {
        var asked: [String] = []
        func urlSession(
            _ session: URLSession,
            task: URLSessionTask,
            didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            asked.append(challenge.protectionSpace.authenticationMethod)
            guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodNegotiate else {
                completionHandler(.performDefaultHandling, nil)
                return
            }
            let password = KerberosRealm.users["alice"]!
            completionHandler(.useCredential, URLCredential(user: "alice", password: password, persistence: .none))
        }
    }

    @Test func negotiateIsAnsweredWithAURLCredential() async throws {
        let realm = try await KerberosRealm.shared()
        let apache = try await ApacheServer(kerberos: realm)
        defer { apache.stop() }
        let delegate = IntranetLogin()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        let url = URL(string: "http://localhost:\(apache.port)/negotiate/ok.txt")!
        let (data, response) = try await session.data(from: url)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(data: data, encoding: .utf8) == "negotiate ok\n")
        #expect(delegate.asked == [NSURLAuthenticationMethodNegotiate])
    }

    /// NTLM answered with a `URLCredential` in Windows' `DOMAIN\\user` form, over plain http as
    /// Apple's platforms send it.
    class WindowsLogin: NSObject, URLSessionTaskDelegate {
        var asked: [String] = []
        func urlSession(
            _ session: URLSession,
            task: URLSessionTask,
            didReceive challenge: URLAuthenticationChallenge
        ) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
            asked.append(challenge.protectionSpace.authenticationMethod)
            guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodNTLM else {
                return (.rejectProtectionSpace, nil)
            }
            let (user, password) = ApacheServer.ntlmUsers.first!
            return (.useCredential, URLCredential(user: user, password: password, persistence: .forSession))
        }
    }

    @Test func ntlmIsAnsweredWithAURLCredential() async throws {
        let apache = try await ApacheServer(kerberos: try await KerberosRealm.shared())
        defer { apache.stop() }
        let delegate = WindowsLogin()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        let url = URL(string: "http://localhost:\(apache.port)/negotiate-ntlm/ok.txt")!
        let (data, response) = try await session.data(from: url)
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(data: data, encoding: .utf8) == "negotiate ok\n")
        // Negotiate is offered first (Kerberos only: carol has no principal) and rejected.
        #expect(delegate.asked == [NSURLAuthenticationMethodNegotiate, NSURLAuthenticationMethodNTLM])
    }

    /// The async delegate form, at the task level, answering Basic with `URLCredential`.
    class AsyncLogin: NSObject, URLSessionTaskDelegate {
        func urlSession(
            _ session: URLSession,
            task: URLSessionTask,
            didReceive challenge: URLAuthenticationChallenge
        ) async -> (URLSession.AuthChallengeDisposition, URLCredential?) {
            guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodHTTPBasic else {
                return (.performDefaultHandling, nil)
            }
            #expect(challenge.protectionSpace.realm == "apple")
            #expect((challenge.failureResponse as? HTTPURLResponse)?.statusCode == 401)
            return (.useCredential, URLCredential(user: "ada", password: "s3cret", persistence: .forSession))
        }
    }

    @Test func theAsyncDelegateFormAnswersBasicAndTheCredentialIsKeptForTheSession() async throws {
        let gate = BasicAuthGate(realm: "apple", users: ["ada": "s3cret"])
        let origin = try server { request in gate.check(request) ?? .text("in") }
        defer { origin.shutdown() }
        let session = URLSession(configuration: .ephemeral, delegate: AsyncLogin(), delegateQueue: nil)
        for _ in 0..<2 {
            let (data, _) = try await session.data(from: URL(string: origin.baseURL + "/a/b")!)
            #expect(String(data: data, encoding: .utf8) == "in")
        }
        // The first request was challenged; the second went out with the credential at once.
        #expect(origin.requests.count == 3)
        let storage = session.configuration.urlCredentialStorage
        let space = URLProtectionSpace(
            host: "localhost",
            port: origin.port,
            protocol: "http",
            realm: "apple",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )
        #expect(storage?.defaultCredential(for: space)?.user == "ada")
    }

    /// A data delegate: response, data, completion, in order, on the delegate queue.
    class Collector: NSObject, URLSessionDataDelegate {
        let queue: OperationQueue
        var events: [String] = []
        var body = Data()
        var onQueue = true
        let done: (Error?) -> Void
        init(queue: OperationQueue, done: @escaping (Error?) -> Void) {
            self.queue = queue
            self.done = done
        }

        func urlSession(
            _ session: URLSession,
            dataTask: URLSessionDataTask,
            didReceive response: URLResponse,
            completionHandler: @escaping (URLSession.ResponseDisposition) -> Void
        ) {
            onQueue = onQueue && OperationQueue.current === queue
            events.append("response \((response as? HTTPURLResponse)?.statusCode ?? 0) \(response.mimeType ?? "-")")
            completionHandler(.allow)
        }

        func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
            onQueue = onQueue && OperationQueue.current === queue
            body.append(data)
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            onQueue = onQueue && OperationQueue.current === queue
            events.append("complete \(error == nil)")
            done(error)
        }
    }

    @Test func aDataDelegateSeesResponseDataAndCompletionOnItsQueue() async throws {
        let payload = String(repeating: "sesame ", count: 20_000)
        let origin = try server { _ in .text(payload, headers: [("Content-Type", "text/plain; charset=utf-8")]) }
        defer { origin.shutdown() }
        let queue = OperationQueue()
        queue.maxConcurrentOperationCount = 1
        var collector: Collector!
        let error: Error? = await withCheckedContinuation { continuation in
            collector = Collector(queue: queue) { continuation.resume(returning: $0) }
            let session = URLSession(configuration: .ephemeral, delegate: collector, delegateQueue: queue)
            let task = session.dataTask(with: URL(string: origin.baseURL + "/")!)
            #expect(task.state == .suspended)
            task.resume()
        }
        #expect(error == nil)
        #expect(collector.events == ["response 200 text/plain", "complete true"])
        #expect(String(data: collector.body, encoding: .utf8) == payload)
        #expect(collector.onQueue)
    }

    /// Upload progress: `didSendBodyData` on the queue, totals climbing to the file's length,
    /// and the task's counters agreeing.
    class UploadWatcher: NSObject, URLSessionTaskDelegate {
        var reports: [(sent: Int64, total: Int64, expected: Int64)] = []
        let done: (Error?) -> Void
        init(done: @escaping (Error?) -> Void) { self.done = done }

        func urlSession(
            _ session: URLSession,
            task: URLSessionTask,
            didSendBodyData bytesSent: Int64,
            totalBytesSent: Int64,
            totalBytesExpectedToSend: Int64
        ) {
            reports.append((bytesSent, totalBytesSent, totalBytesExpectedToSend))
        }

        func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
            done(error)
        }
    }

    @Test func uploadProgressReachesTheBodyLength() async throws {
        let origin = try server { request in .text("\(request.body.count)") }
        defer { origin.shutdown() }
        let file = try ScratchFolder.make("upload-progress").appendingPathComponent("body.bin")
        try Data(repeating: 0x5A, count: 3 << 20 + 17).write(to: file)
        var watcher: UploadWatcher!
        var task: URLSessionUploadTask!
        let error: Error? = await withCheckedContinuation { continuation in
            watcher = UploadWatcher { continuation.resume(returning: $0) }
            let session = URLSession(configuration: .ephemeral, delegate: watcher, delegateQueue: nil)
            var request = URLRequest(url: URL(string: origin.baseURL + "/up")!)
            request.httpMethod = "PUT"
            task = session.uploadTask(with: request, fromFile: file)
            #expect(task.countOfBytesExpectedToSend == Int64(3 << 20 + 17))
            task.resume()
        }
        #expect(error == nil)
        let expected = Int64(3 << 20 + 17)
        #expect(watcher.reports.count >= 3)
        #expect(watcher.reports.allSatisfy { $0.expected == expected })
        #expect(watcher.reports.map(\.sent).reduce(0, +) == expected)
        #expect(watcher.reports.last?.total == expected)
        #expect(task.countOfBytesSent == expected)
        #expect(origin.requests.first?.body.count == Int(expected))
    }

    /// A redirect refused by returning nil: the redirect response itself is the answer.
    class NoRedirects: NSObject, URLSessionTaskDelegate {
        var seen: [String] = []
        func urlSession(
            _ session: URLSession,
            task: URLSessionTask,
            willPerformHTTPRedirection response: HTTPURLResponse,
            newRequest request: URLRequest,
            completionHandler: @escaping (URLRequest?) -> Void
        ) {
            seen.append("\(response.statusCode) \(request.url?.path ?? "")")
            completionHandler(nil)
        }
    }

    @Test func aRefusedRedirectDeliversTheRedirect() async throws {
        let origin = try server { request in request.target == "/" ? .redirect(302, to: "/next") : .text("next") }
        defer { origin.shutdown() }
        let delegate = NoRedirects()
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        let (_, response) = try await session.data(from: URL(string: origin.baseURL + "/")!)
        #expect((response as? HTTPURLResponse)?.statusCode == 302)
        #expect((response as? HTTPURLResponse)?.value(forHTTPHeaderField: "location") == "/next")
        #expect(delegate.seen == ["302 /next"])
    }

    @Test func aDownloadIsAFileUntilTheHandlerReturns() async throws {
        let origin = try server { _ in .text("downloaded") }
        defer { origin.shutdown() }
        let session = URLSession(configuration: .ephemeral)
        let (text, location): (String?, URL?) = await withCheckedContinuation { continuation in
            session.downloadTask(with: URL(string: origin.baseURL + "/file")!) { location, response, error in
                let text = location.flatMap { try? String(contentsOf: $0, encoding: .utf8) }
                continuation.resume(returning: (text, location))
            }.resume()
        }
        #expect(text == "downloaded")
        // Removed once the handler returned (the queue finishes the operation just after).
        #expect(await eventually { location.map { !FileManager.default.fileExists(atPath: $0.path) } ?? false })
    }

    @Test func cancellingARunningTaskIsCancelled() async throws {
        let listener = try StalledListener(.acceptsAndSaysNothing)
        defer { listener.close() }
        let session = URLSession(configuration: .ephemeral)
        let error: Error? = await withCheckedContinuation { continuation in
            let cancelled = session.dataTask(with: URL(string: "http://127.0.0.1:\(listener.port)/")!) { _, _, error in
                continuation.resume(returning: error)
            }
            cancelled.resume()
            DispatchQueue.global().asyncAfter(deadline: .now() + 0.1) { cancelled.cancel() }
        }
        #expect((error as NSError?)?.domain == NSURLErrorDomain)
        #expect((error as NSError?)?.code == NSURLErrorCancelled)
    }

    @Test func credentialStorageChangesAreAnnouncedAndSpacesCompareByValue() async throws {
        let storage = URLCredentialStorage()
        let received = Lines()
        let observer = NotificationCenter.default.addObserver(
            forName: .NSURLCredentialStorageChanged,
            object: storage,
            queue: nil
        ) { _ in
            received.append("changed")
        }
        defer { NotificationCenter.default.removeObserver(observer) }
        let space = URLProtectionSpace(
            host: "api.example",
            port: 443,
            protocol: NSURLProtectionSpaceHTTPS,
            realm: "r",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )
        storage.setDefaultCredential(URLCredential(user: "ada", password: "x", persistence: .forSession), for: space)
        let same = URLProtectionSpace(
            host: "api.example",
            port: 443,
            protocol: NSURLProtectionSpaceHTTPS,
            realm: "r",
            authenticationMethod: NSURLAuthenticationMethodHTTPBasic
        )
        #expect(same == space)
        #expect(storage.defaultCredential(for: same)?.user == "ada")
        #expect(storage.credentials(for: same)?["ada"]?.password == "x")
        #expect(await received.reached(1, within: .seconds(60)))
    }
}
