import SesameNetworking
import SesameTesting
import Testing

/// The seeds' listings, in Apple's Swift spelling, with only the import lines changed.
@Suite struct SeedListingTests {
    /// Seed 000, Listing 4-1, as printed: a credential the first time, cancel after a failure.
    class Listing41: NSObject, URLSessionDelegate {
        var preferencesName: String
        var preferencesPassword: String
        var failureCounts: [Int] = []

        init(name: String, password: String) {
            preferencesName = name
            preferencesPassword = password
        }

        func urlSession(
            _ session: URLSession,
            didReceive challenge: URLAuthenticationChallenge,
            completionHandler: (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            failureCounts.append(challenge.previousFailureCount)
            guard challenge.previousFailureCount == 0 else {
                challenge.sender?.cancel(challenge)
                // Inform the user that the user name and password are incorrect
                completionHandler(.cancelAuthenticationChallenge, nil)
                return
            }

            let proposedCredential = URLCredential(
                user: self.preferencesName,
                password: self.preferencesPassword,
                persistence: .none
            )
            completionHandler(.useCredential, proposedCredential)
        }
    }

    func basicServer() throws -> LocalServer {
        let gate = BasicAuthGate(realm: "seed", users: ["ada": "s3cret"])
        return try server { request in gate.check(request) ?? .text("hello ada") }
    }

    @Test func listing41AnswersBasicAndARefusalIsCancelled() async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let url = URL(string: origin.baseURL + "/private")!
        let right = Listing41(name: "ada", password: "s3cret")
        let session = URLSession(configuration: .ephemeral, delegate: right, delegateQueue: nil)
        let (data, response, error) = await load(session, URLRequest(url: url))
        #expect(error == nil)
        #expect(response?.statusCode == 200)
        #expect(String(data: data ?? Data(), encoding: .utf8) == "hello ada")
        #expect(right.failureCounts == [0])

        let wrong = Listing41(name: "ada", password: "nope")
        let refused = await load(
            URLSession(configuration: .ephemeral, delegate: wrong, delegateQueue: nil),
            URLRequest(url: url)
        )
        let failure = refused.error as NSError?
        #expect(failure?.domain == NSURLErrorDomain)
        #expect(failure?.code == NSURLErrorCancelled)
        #expect((failure?.userInfo[NSURLErrorFailingURLErrorKey] as? URL) == url)
        #expect(wrong.failureCounts == [0, 1])
    }

    /// Seed 002 in Swift: one session-level method answers the client-certificate challenge with an
    /// identity from PKCS#12 and trusts the server whose certificate equals the bundled one.
    class MutualTLSDelegate: NSObject, URLSessionDelegate {
        let p12: Data
        let bundledCertificate: Data?
        var methods: [String] = []

        init(p12: Data, bundledCertificate: Data?) {
            self.p12 = p12
            self.bundledCertificate = bundledCertificate
        }

        func urlSession(
            _ session: URLSession,
            didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            methods.append(challenge.protectionSpace.authenticationMethod)
            if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodClientCertificate {
                var items: CFArray?
                let status = SecPKCS12Import(
                    p12 as CFData,
                    [kSecImportExportPassphrase: "secret"] as CFDictionary,
                    &items
                )
                guard status == errSecSuccess, let first = (items as? [[String: Any]])?.first,
                    let identity = first[kSecImportItemIdentity as String] as! SecIdentity?
                else {
                    completionHandler(.cancelAuthenticationChallenge, nil)
                    return
                }
                completionHandler(
                    .useCredential,
                    URLCredential(identity: identity, certificates: nil, persistence: .forSession)
                )
            } else if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust {
                let serverTrust = challenge.protectionSpace.serverTrust!
                let serverCertificate = SecTrustGetCertificateAtIndex(serverTrust, 0)!
                let serverData = SecCertificateCopyData(serverCertificate) as Data
                if bundledCertificate == nil || serverData == bundledCertificate {
                    let credential = URLCredential(trust: serverTrust)
                    challenge.sender?.use(credential, for: challenge)
                    completionHandler(.useCredential, credential)
                } else {
                    completionHandler(.cancelAuthenticationChallenge, nil)
                }
            } else {
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
        }
    }

    @Test func seed002MutualTLSWithABundledServerCertificate() async throws {
        let leaf = try pki.leaf()
        var configuration = LocalServer.Configuration(identity: leaf)
        configuration.clientAuthentication = .required(trusting: [pki.clientCA.certificate])
        configuration.handler = { request in
            .text("client \(request.headers["authorization"] ?? "-") \(request.clientCertificateSubject ?? "none")")
        }
        let origin = try LocalServer(configuration)
        defer { origin.shutdown() }
        let p12 = try pki.clientCertificate(commonName: "seed-002").pkcs12(password: "secret")

        let delegate = MutualTLSDelegate(p12: p12, bundledCertificate: der(leaf.certificatePEM))
        let session = URLSession(configuration: .default, delegate: delegate, delegateQueue: OperationQueue.main)
        var request = URLRequest(url: URL(string: origin.baseURL + "/")!)
        request.httpMethod = "GET"
        let userData = "name:password".data(using: .utf8)!
        request.setValue("Basic \(userData.base64EncodedString())", forHTTPHeaderField: "Authorization")
        let (data, response, error) = await load(session, request)
        #expect(error == nil, "\(String(describing: error))")
        #expect(response?.statusCode == 200)
        let text = String(data: data ?? Data(), encoding: .utf8) ?? ""
        #expect(text.hasPrefix("client Basic bmFtZTpwYXNzd29yZA== "), "\(text)")
        #expect(text.contains("seed-002"), "\(text)")
        #expect(
            Set(delegate.methods) == [NSURLAuthenticationMethodServerTrust, NSURLAuthenticationMethodClientCertificate]
        )

        // Another certificate than the bundled one: cancelled, as Apple reports it.
        let other = MutualTLSDelegate(p12: p12, bundledCertificate: der(pki.untrustedRoot.certificatePEM))
        let refused = await load(URLSession(configuration: .ephemeral, delegate: other, delegateQueue: nil), request)
        #expect((refused.error as NSError?)?.code == NSURLErrorCancelled)
    }

    /// Seed 003's trust decision, in a URLSession delegate: the server's trust evaluated against a
    /// bundled anchor with `SecTrustSetAnchorCertificates` and `SecTrustEvaluate`; its GB18030 POST.
    class AnchorDelegate: NSObject, URLSessionTaskDelegate {
        let anchor: Data
        var results: [SecTrustResultType] = []
        init(anchor: Data) { self.anchor = anchor }

        func urlSession(
            _ session: URLSession,
            task: URLSessionTask,
            didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            guard challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust,
                let trust = challenge.protectionSpace.serverTrust
            else { return completionHandler(.performDefaultHandling, nil) }
            let certificate = SecCertificateCreateWithData(nil, anchor as CFData)!
            SecTrustSetAnchorCertificates(trust, [certificate] as CFArray)
            var result = SecTrustResultType.invalid
            let status = SecTrustEvaluate(trust, &result)
            results.append(result)
            if status == errSecSuccess && (result == .proceed || result == .unspecified) {
                let cred = URLCredential(trust: trust)
                challenge.sender?.use(cred, for: challenge)
                completionHandler(.useCredential, cred)
            } else {
                challenge.sender?.cancel(challenge)
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
        }
    }

    @Test func seed003AnchorEvaluationAndAGB18030Post() async throws {
        let gbkEncoding = String.Encoding(
            rawValue: CFStringConvertEncodingToNSStringEncoding(
                CFStringEncoding(CFStringEncodings.GB_18030_2000.rawValue)
            )
        )
        let reply = "{\"结果\": \"成功\"}".data(using: gbkEncoding)!
        let received = Lines()
        let origin = try server(tls: true) { request in
            received.append(String(data: Data(request.body), encoding: gbkEncoding) ?? "?")
            return .bytes(
                [UInt8](reply),
                headers: [("Content-Type", "application/json; charset=gb18030"), ("Set-Cookie", "sid=1; Path=/")]
            )
        }
        defer { origin.shutdown() }
        let delegate = AnchorDelegate(anchor: der(pki.root.certificatePEM))
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)
        var request = URLRequest(
            url: URL(string: origin.baseURL + "/post")!,
            cachePolicy: .useProtocolCachePolicy,
            timeoutInterval: 240
        )
        request.httpMethod = "POST"
        request.httpShouldHandleCookies = true
        request.httpBody = "名字=测试&XX=XX".data(using: gbkEncoding)
        let first = await load(session, request)
        #expect(first.error == nil, "\(String(describing: first.error))")
        #expect(delegate.results == [.unspecified])
        let retStr = String(data: first.data ?? Data(), encoding: gbkEncoding)
        let newData = retStr?.data(using: .utf8) ?? Data()
        let object = try JSONSerialization.jsonObject(with: newData) as? [String: String]
        #expect(object?["结果"] == "成功")
        #expect(received.all == ["名字=测试&XX=XX"])
        // The cookie came back with the next request.
        _ = await load(session, request)
        #expect(origin.requests.last?.headers["cookie"] == "sid=1")

        // Another anchor: the evaluation fails and the task is cancelled.
        let stranger = AnchorDelegate(anchor: der(pki.untrustedRoot.certificatePEM))
        let refused = await load(URLSession(configuration: .ephemeral, delegate: stranger, delegateQueue: nil), request)
        #expect(stranger.results == [.recoverableTrustFailure])
        #expect((refused.error as NSError?)?.code == NSURLErrorCancelled)
    }
}
