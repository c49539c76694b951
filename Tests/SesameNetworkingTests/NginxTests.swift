import SesameNetworking
import SesameTesting
import Testing

/// Apple-platform code against nginx: Basic with a UTF-8 password over https trusted through a
/// bundled anchor, and a client certificate nginx verifies.
@Suite struct NginxTests {
    /// Trusts the server through a bundled anchor, answers Basic once and presents a PKCS#12
    /// identity when asked, all at session level (seed 002's shape).
    class AppDelegate: NSObject, URLSessionDelegate {
        let anchor: SecCertificate
        let p12: Data
        var asked: [String] = []
        init(anchor: SecCertificate, p12: Data) {
            self.anchor = anchor
            self.p12 = p12
        }

        func urlSession(
            _ session: URLSession,
            didReceive challenge: URLAuthenticationChallenge,
            completionHandler: @escaping (URLSession.AuthChallengeDisposition, URLCredential?) -> Void
        ) {
            let method = challenge.protectionSpace.authenticationMethod
            asked.append(method)
            switch method {
            case NSURLAuthenticationMethodServerTrust:
                guard let trust = challenge.protectionSpace.serverTrust else {
                    return completionHandler(.cancelAuthenticationChallenge, nil)
                }
                SecTrustSetAnchorCertificates(trust, [anchor] as CFArray)
                var error: CFError?
                completionHandler(
                    SecTrustEvaluateWithError(trust, &error) ? .useCredential : .cancelAuthenticationChallenge,
                    URLCredential(trust: trust)
                )
            case NSURLAuthenticationMethodHTTPBasic where challenge.previousFailureCount == 0:
                completionHandler(
                    .useCredential,
                    URLCredential(user: "test", password: "123£", persistence: .forSession)
                )
            case NSURLAuthenticationMethodClientCertificate:
                var items: CFArray?
                guard
                    SecPKCS12Import(p12 as CFData, [kSecImportExportPassphrase: "p12"] as CFDictionary, &items)
                        == errSecSuccess,
                    let identity = (items as? [[String: Any]])?.first?[kSecImportItemIdentity as String]
                        as! SecIdentity?
                else { return completionHandler(.cancelAuthenticationChallenge, nil) }
                completionHandler(
                    .useCredential,
                    URLCredential(identity: identity, certificates: nil, persistence: .forSession)
                )
            default:
                completionHandler(.cancelAuthenticationChallenge, nil)
            }
        }
    }

    @Test func basicAndMutualTLSAgainstNginx() async throws {
        let nginx = try await NginxServer(pki: pki)
        defer { nginx.stop() }
        let anchor = SecCertificateCreateWithData(nil, der(pki.root.certificatePEM) as CFData)!
        let p12 = try pki.clientCertificate(commonName: "apple-app").pkcs12(password: "p12")
        let delegate = AppDelegate(anchor: anchor, p12: p12)
        let session = URLSession(configuration: .ephemeral, delegate: delegate, delegateQueue: nil)

        let (basic, response) = try await session.data(
            from: URL(string: "https://localhost:\(nginx.httpsPort)/basic/one")!
        )
        #expect((response as? HTTPURLResponse)?.statusCode == 200)
        #expect(String(data: basic, encoding: .utf8) == "basic ok user=test")
        #expect(delegate.asked == [NSURLAuthenticationMethodServerTrust, NSURLAuthenticationMethodHTTPBasic])

        let port = nginx.trustCasePorts["client-certificate"]!
        let (mutual, _) = try await session.data(from: URL(string: "https://localhost:\(port)/")!)
        let text = String(data: mutual, encoding: .utf8) ?? ""
        #expect(text.contains("verify=SUCCESS"), "\(text)")
        #expect(text.contains("apple-app"), "\(text)")
        #expect(delegate.asked.contains(NSURLAuthenticationMethodClientCertificate))
    }
}
