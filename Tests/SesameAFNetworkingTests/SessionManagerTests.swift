import SesameAFNetworking
import SesameTesting
import Testing

extension AFNetworkingTests {
    /// AFHTTPSessionManager's challenge blocks, multipart uploads and downloads, written as
    /// AFNetworking code is.
    @Suite struct SessionManagerTests {
        /// Seed 004's session method with a block: the block answers the server trust (through the
        /// manager's policy, pinned to the test root) and nginx's Basic challenge.
        @Test func theSessionChallengeBlockAnswersServerTrustAndBasic() async throws {
            let nginx = try await NginxServer(pki: pki)
            defer { nginx.stop() }
            let manager = AFHTTPSessionManager(baseURL: URL(string: "https://localhost:\(nginx.httpsPort)/"))
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            manager.responseSerializer = AFHTTPResponseSerializer()
            manager.securityPolicy = AFSecurityPolicy(
                pinningMode: .certificate,
                withPinnedCertificates: [der(pki.root.certificatePEM)]
            )
            var asked: [String] = []
            manager.setSessionDidReceiveAuthenticationChallenge { session, challenge, credential in
                var disposition = URLSession.AuthChallengeDisposition.performDefaultHandling
                asked.append(challenge.protectionSpace.authenticationMethod)
                if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodServerTrust {
                    if manager.securityPolicy.evaluateServerTrust(
                        challenge.protectionSpace.serverTrust!,
                        forDomain: challenge.protectionSpace.host
                    ) {
                        credential?.pointee = URLCredential(trust: challenge.protectionSpace.serverTrust!)
                        disposition = .useCredential
                    } else {
                        disposition = .cancelAuthenticationChallenge
                    }
                } else if challenge.protectionSpace.authenticationMethod == NSURLAuthenticationMethodHTTPBasic,
                    challenge.previousFailureCount == 0
                {
                    credential?.pointee = URLCredential(user: "test", password: "123£", persistence: .none)
                    disposition = .useCredential
                }
                return disposition
            }
            let result = await outcome { success, failure in
                manager.get(
                    "basic/one",
                    parameters: nil,
                    headers: nil,
                    progress: nil,
                    success: success,
                    failure: failure
                )
            }
            #expect(
                String(data: result.object as? Data ?? Data(), encoding: .utf8) == "basic ok user=test",
                "\(result)"
            )
            #expect(asked == [NSURLAuthenticationMethodServerTrust, NSURLAuthenticationMethodHTTPBasic])
        }

        /// A task block takes 401s first; AFNetworking 4's handler can fail the task with its own error.
        @Test func taskChallengeBlockAndHandler() async throws {
            let gate = BasicAuthGate(realm: "af", users: ["ada": "s3cret"])
            let origin = try server { request in
                gate.check(request) ?? .text("{\"ok\":1}", headers: [("Content-Type", "application/json")])
            }
            defer { origin.shutdown() }
            let manager = AFHTTPSessionManager(baseURL: URL(string: origin.baseURL))
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            var failures: [Int] = []
            manager.setTaskDidReceiveAuthenticationChallenge { _, _, challenge, credential in
                failures.append(challenge.previousFailureCount)
                guard challenge.previousFailureCount < 2 else { return .cancelAuthenticationChallenge }
                credential?.pointee = URLCredential(
                    user: "ada",
                    password: challenge.previousFailureCount == 0 ? "wrong" : "s3cret",
                    persistence: .none
                )
                return .useCredential
            }
            let answered = await outcome { success, failure in
                manager.get(
                    "/private",
                    parameters: nil,
                    headers: nil,
                    progress: nil,
                    success: success,
                    failure: failure
                )
            }
            #expect((answered.object as? [String: Any])?["ok"] as? Int == 1, "\(answered)")
            #expect(failures == [0, 1])

            let refusal = NSError(domain: "app", code: 42, userInfo: [NSLocalizedDescriptionKey: "no credentials here"])
            manager.setAuthenticationChallengeHandler { _, _, _, _ in refusal }
            let refused = await outcome { success, failure in
                manager.get(
                    "/private",
                    parameters: nil,
                    headers: nil,
                    progress: nil,
                    success: success,
                    failure: failure
                )
            }
            #expect(refused.error?.domain == "app" && refused.error?.code == 42, "\(refused)")
        }

        /// A multipart POST of a file larger than any buffer: the fields and the file arrive intact,
        /// the file is read from disk as it is sent, and upload progress climbs to the body's length.
        @Test func multipartUploadOfALargeFile() async throws {
            let origin = try server { request in
                .text("{\"bytes\":\(request.body.count)}", headers: [("Content-Type", "application/json")])
            }
            defer { origin.shutdown() }
            let folder = try ScratchFolder.make("af-multipart")
            let file = folder.appendingPathComponent("large.bin")
            let content = Data((0..<(6 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) })
            try content.write(to: file)
            let manager = AFHTTPSessionManager(baseURL: URL(string: origin.baseURL))
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            var progress: [(Int64, Int64)] = []
            let result = await outcome { success, failure in
                manager.post(
                    "/upload",
                    parameters: ["album": "中秋", "tags": ["a", "b"]],
                    headers: ["X-Upload": "1"],
                    constructingBodyWith: { form in
                        try? form.appendPart(
                            withFileURL: file,
                            name: "photo",
                            fileName: "large.bin",
                            mimeType: "application/octet-stream"
                        )
                        form.appendPart(withForm: Data("note".utf8), name: "caption")
                    },
                    progress: { value in progress.append((value.completedUnitCount, value.totalUnitCount)) },
                    success: success,
                    failure: failure
                )
            }
            let request = try #require(origin.requests.first, "\(result)")
            let type = request.headers.first("Content-Type") ?? ""
            #expect(type.hasPrefix("multipart/form-data; boundary="))
            let boundary = String(type.dropFirst("multipart/form-data; boundary=".count))
            let body = Data(request.body)
            #expect((result.object as? [String: Any])?["bytes"] as? Int == body.count)
            #expect(request.headers.first("Content-Length") == "\(body.count)")
            #expect(request.headers.first("X-Upload") == "1")
            let head = Data(
                "--\(boundary)\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"large.bin\"\r\nContent-Type: application/octet-stream\r\n\r\n"
                    .utf8
            )
            let start = try #require(body.range(of: head)).upperBound
            #expect(body[start..<(start + content.count)] == content)
            let text = String(decoding: body.prefix(start), as: UTF8.self)
            #expect(text.contains("name=\"album\"\r\n\r\n中秋\r\n"))
            #expect(text.contains("name=\"tags[]\"\r\n\r\na\r\n"))
            #expect(String(decoding: body.suffix(200), as: UTF8.self).hasSuffix("note\r\n--\(boundary)--\r\n"))
            #expect(progress.count > 2)
            #expect(
                progress.last.map { $0.0 == Int64(body.count) && $0.1 == Int64(body.count) } == true,
                "\(progress.suffix(3))"
            )
        }

        /// A part a file cannot give fails the POST before anything is sent.
        @Test func multipartWithAMissingFileFailsBeforeSending() async throws {
            let origin = try server { _ in .text("{}") }
            defer { origin.shutdown() }
            let manager = AFHTTPSessionManager(baseURL: URL(string: origin.baseURL))
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            var thrown: Error?
            let result = await outcome { success, failure in
                manager.post(
                    "/upload",
                    parameters: nil,
                    headers: nil,
                    constructingBodyWith: { form in
                        do {
                            try form.appendPart(withFileURL: URL(fileURLWithPath: "/nonexistent/file.bin"), name: "f")
                        } catch { thrown = error }
                        form.appendPart(withHeaders: ["X-Bad": "a\r\nInjected: yes"], body: Data())
                    },
                    progress: nil,
                    success: success,
                    failure: failure
                )
            }
            #expect((thrown as NSError?)?.domain == AFURLRequestSerializationErrorDomain)
            #expect(result.error?.domain == AFURLRequestSerializationErrorDomain, "\(result)")
            #expect(origin.requests.isEmpty)
        }

        /// A download moved to its destination, with download progress, on a completion queue of the caller's.
        @Test func downloadToADestination() async throws {
            let nginx = try await NginxServer(pki: pki)
            defer { nginx.stop() }
            let manager = AFURLSessionManager(sessionConfiguration: .default)
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            manager.completionQueue = DispatchQueue(label: "downloads")
            let target = try ScratchFolder.make("af-download").appendingPathComponent("large.bin")
            var progressCalls = 0
            let request = URLRequest(url: URL(string: "http://localhost:\(nginx.httpPort)/large.bin")!)
            let (path, error): (URL?, Error?) = await withCheckedContinuation { continuation in
                manager.downloadTask(
                    with: request,
                    progress: { _ in progressCalls += 1 },
                    destination: { _, response in
                        #expect((response as? HTTPURLResponse)?.statusCode == 200)
                        return target
                    },
                    completionHandler: { _, path, error in continuation.resume(returning: (path, error)) }
                ).resume()
            }
            #expect(error == nil, "\(String(describing: error))")
            #expect(path == target)
            #expect(FileManager.default.contents(atPath: target.path) == Data(NginxServer.largeFile))
            #expect(progressCalls > 0)
            #expect(manager.tasks.isEmpty)
        }
    }
}
