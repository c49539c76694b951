import SesameAFNetworking
import SesameTesting
import Testing

extension AFNetworkingTests {
    /// AFSecurityPolicy on an AFHTTPSessionManager, as AFNetworking code sets it up, against nginx and
    /// against servers whose certificates no system trusts.
    @Suite struct SecurityPolicyTests {
        /// Public-key pinning of a server whose CA no system trusts (AFNetworking's setup for a
        /// self-managed CA: `allowInvalidCertificates` with pins, names still validated): nginx's key
        /// passes; after the key is rotated (a pin of another key), the manager fails with
        /// AFNetworking 4's -1202 instead of a cancellation.
        @Test func publicKeyPinningAgainstNginxAndARotatedKey() async throws {
            let nginx = try await NginxServer(pki: pki)
            defer { nginx.stop() }
            let served = try String(contentsOf: nginx.prefix.appendingPathComponent("server.pem"), encoding: .utf8)

            func fetch(pinning pin: Data) async -> Outcome {
                let manager = AFHTTPSessionManager(baseURL: URL(string: "https://localhost:\(nginx.httpsPort)"))
                defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
                manager.responseSerializer = AFHTTPResponseSerializer()
                let policy = AFSecurityPolicy(pinningMode: .publicKey, withPinnedCertificates: [pin])
                policy.allowInvalidCertificates = true
                manager.securityPolicy = policy
                manager.completionQueue = DispatchQueue(label: "af-test")
                return await outcome { success, failure in
                    manager.get(
                        "small.txt",
                        parameters: nil,
                        headers: nil,
                        progress: nil,
                        success: success,
                        failure: failure
                    )
                }
            }
            let pinned = await fetch(pinning: der(served))
            #expect(String(data: pinned.object as? Data ?? Data(), encoding: .utf8) == "hello nginx\n", "\(pinned)")
            let rotated = await fetch(pinning: der(try pki.leaf().certificatePEM))
            let refused = try #require(rotated.error, "\(rotated)")
            #expect(refused.domain == NSURLErrorDomain)
            #expect(refused.code == NSURLErrorServerCertificateUntrusted)
            #expect((refused.userInfo[NSURLErrorFailingURLErrorKey] as? URL)?.path == "/small.txt")
            #expect(refused.userInfo[NSURLErrorFailingURLPeerTrustErrorKey] is SecTrust)
            #expect(
                (refused.userInfo[NSLocalizedFailureReasonErrorKey] as? String)?.contains("no pinned public key")
                    == true
            )
        }

        /// Certificate pinning with `allowInvalidCertificates` on nginx's self-signed server: the
        /// pinned certificate is the anchor, so it passes; a different self-signed pin does not.
        @Test func certificatePinningOnASelfSignedServer() async throws {
            let nginx = try await NginxServer(pki: pki)
            defer { nginx.stop() }
            let served = try String(
                contentsOf: nginx.prefix.appendingPathComponent("case-self-signed.pem"),
                encoding: .utf8
            )
            let port = nginx.trustCasePorts["self-signed"]!

            func fetch(pins: Set<Data>) async -> Outcome {
                let manager = AFHTTPSessionManager(baseURL: URL(string: "https://localhost:\(port)/"))
                defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
                manager.responseSerializer = AFHTTPResponseSerializer()
                let policy = AFSecurityPolicy(pinningMode: .certificate, withPinnedCertificates: pins)
                policy.allowInvalidCertificates = true
                policy.validatesDomainName = true
                manager.securityPolicy = policy
                return await outcome { success, failure in
                    manager.get("", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
                }
            }
            let pinned = await fetch(pins: [der(served)])
            #expect(String(data: pinned.object as? Data ?? Data(), encoding: .utf8) == "self-signed", "\(pinned)")
            let other = await fetch(pins: [der(try pki.selfSignedLeaf().certificatePEM)])
            #expect(other.error?.code == NSURLErrorServerCertificateUntrusted, "\(other)")
        }

        /// `validatesDomainName` on and off against nginx's certificate for another host (a valid
        /// chain to the pinned root): refused with it on, accepted with it off.
        @Test func domainNameValidationOnAndOffForAWrongHostCertificate() async throws {
            let nginx = try await NginxServer(pki: pki)
            defer { nginx.stop() }
            let port = nginx.trustCasePorts["wrong-host"]!

            func fetch(validatingDomain: Bool) async -> Outcome {
                let manager = AFHTTPSessionManager(baseURL: URL(string: "https://localhost:\(port)/"))
                defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
                manager.responseSerializer = AFHTTPResponseSerializer()
                let policy = AFSecurityPolicy(
                    pinningMode: .certificate,
                    withPinnedCertificates: [der(pki.root.certificatePEM)]
                )
                policy.validatesDomainName = validatingDomain
                manager.securityPolicy = policy
                return await outcome { success, failure in
                    manager.get("", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
                }
            }
            let validating = await fetch(validatingDomain: true)
            #expect(validating.error?.code == NSURLErrorServerCertificateUntrusted, "\(validating)")
            let reason = validating.error?.userInfo[NSLocalizedFailureReasonErrorKey] as? String ?? ""
            #expect(reason.contains("hostname mismatch"), "\(reason)")
            let lenient = await fetch(validatingDomain: false)
            #expect(String(data: lenient.object as? Data ?? Data(), encoding: .utf8) == "wrong-host", "\(lenient)")
        }

        /// The default policy refuses a self-signed server and says so with -1202.
        @Test func theDefaultPolicyRefusesASelfSignedServer() async throws {
            let origin = try server(identity: try pki.selfSignedLeaf()) { _ in .text("should not be read") }
            defer { origin.shutdown() }
            let manager = AFHTTPSessionManager(baseURL: URL(string: origin.baseURL))
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            let result = await outcome { success, failure in
                manager.get("/x", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
            }
            #expect(result.error?.code == NSURLErrorServerCertificateUntrusted, "\(result)")
            #expect(origin.requests.isEmpty)
        }

        /// `certificates(in:)` reads the `.cer` files of a folder (a bundle on Linux).
        @Test func certificatesInAFolder() throws {
            let folder = try ScratchFolder.make("af-bundle")
            try der(pki.root.certificatePEM).write(to: folder.appendingPathComponent("root.cer"))
            try der(pki.intermediate.certificatePEM).write(to: folder.appendingPathComponent("intermediate.cer"))
            try Data("not a certificate".utf8).write(to: folder.appendingPathComponent("notes.txt"))
            let bundle = try #require(Bundle(path: folder.path))
            #expect(AFSecurityPolicy.certificates(in: bundle).count == 2)
        }

        /// A pinning policy on a manager without an https base URL stops the program, as AFNetworking's
        /// exception does.
        @Test func pinningNeedsAnHTTPSBaseURL() async {
            await #expect(processExitsWith: .failure) {
                let manager = AFHTTPSessionManager(baseURL: URL(string: "http://localhost/"))
                manager.securityPolicy = AFSecurityPolicy(pinningMode: .publicKey, withPinnedCertificates: [])
            }
        }
    }
}
