import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Serializers through sessions against `LocalServer`, including the seeds' `003_*` scenario.
@Suite struct SerializationSessionTests {
    func session(anchors: [Certificate] = [sharedPKI.root.certificate]) -> Session {
        var configuration = SessionConfiguration.default
        configuration.tls.trustRoots = .anchors(anchors)
        configuration.credentialStorage = CredentialStorage()
        configuration.cookieStore = CookieStore()
        configuration.proxy = .none
        return Session(configuration: configuration)
    }

    struct Reply: Decodable, Sendable, Equatable {
        let result: String
        let cities: [String]
        let count: Int

        enum CodingKeys: String, CodingKey {
            case result = "结果"
            case cities = "城市"
            case count
        }
    }

    /// Seed 003: a GB18030 form posted over HTTPS to a server trusted through a private anchor,
    /// with cookies on, and a GB18030 JSON answer decoded to Swift values.
    @Test func theSeedsGB18030PostWithCookiesOverAPrivateAnchor() async throws {
        let expectedBody = Array("city=%B1%B1%BE%A9&name=%D5%C5%C8%FD".utf8)  // 北京, 张三 in GB18030
        let answer = try TextEncoding.gb18030.encode(#"{"结果":"成功","城市":["北京","上海"],"count":2}"#)
        var server = LocalServer.Configuration(identity: try sharedPKI.leaf())
        server.handler = { request in
            if request.target == "/start" {
                return .text("", headers: [("Set-Cookie", "JSESSIONID=seed003; Path=/; Secure; HttpOnly")])
            }
            guard request.method == "POST", request.body == expectedBody,
                request.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=gb18030",
                request.headers["Cookie"] == "JSESSIONID=seed003"
            else {
                return .text("unexpected \(request.head) body \(request.body)", status: 400)
            }
            return .bytes(answer, headers: [("Content-Type", "application/json")])  // no charset, as the seed's server
        }
        let origin = try LocalServer(server)
        defer { origin.shutdown() }
        let session = session()
        _ = try await session.data(from: URL(string: origin.baseURL + "/start")!)
        var serializer = HTTPRequestSerializer()
        serializer.stringEncoding = TextEncoding(String.Encoding.gb18030) ?? .gb18030
        serializer.timeout = .seconds(240)
        let request = try serializer.request(
            method: "POST",
            url: URL(string: origin.baseURL + "/login")!,
            parameters: ["name": "张三", "city": "北京"]
        )
        let (reply, response) = try await session.data(
            for: request,
            serializer: DecodableResponseSerializer(Reply.self, overridingEncoding: .gb18030)
        )
        #expect(response.status == 200)
        #expect(reply == Reply(result: "成功", cities: ["北京", "上海"], count: 2))
        #expect(origin.requests.last?.body == expectedBody, "the form arrived byte-exact")
        // The same answer read as UTF-8 is an error, not garbage.
        let error = await #expect(throws: ResponseSerializationError.self) {
            _ = try await session.data(for: request, serializer: JSONResponseSerializer())
        }
        #expect(error?.code == .responseDecodingFailed || error?.code == .textDecodingFailed)
    }

    @Test func multipartBodiesStreamFilesHaveALengthAndAreSentAgainForAChallenge() async throws {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("upload-\(UUID().uuidString).txt")
        let contents = Data((0..<100_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try contents.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let gate = BasicAuthGate(realm: "upload", users: ["ada": "pw"])
        var server = LocalServer.Configuration.plainHTTP
        server.handler = { request in gate.check(request) ?? .text("received \(request.body.count)") }
        let origin = try LocalServer(server)
        defer { origin.shutdown() }
        let serializer = HTTPRequestSerializer()
        let request = try serializer.multipartRequest(
            url: URL(string: "http://ada:pw@127.0.0.1:\(origin.port)/upload")!,
            parameters: ["title": "Résumé \"final\"", "tags": ["a", "b"]]
        ) { form in
            try form.appendFile(at: file, name: "document")
            form.append(Data("{}".utf8), name: "meta", fileName: "meta.json", mimeType: "application/json")
        }
        var configuration = SessionConfiguration.default
        configuration.allowsCleartextPasswords = true
        configuration.credentialStorage = CredentialStorage()
        configuration.proxy = .none
        let (data, response) = try await Session(configuration: configuration).data(for: request)
        #expect(response.status == 200, "\(String(decoding: data, as: UTF8.self))")
        let requests = origin.requests
        #expect(requests.count == 2, "401, then the same body again with credentials")
        let body = try #require(requests.last?.body)
        #expect(requests.first?.body == body)
        #expect(requests.last?.headers["Content-Length"] == String(body.count))
        let type = try #require(requests.last?.headers["Content-Type"])
        let boundary = String(type.split(separator: "=", maxSplits: 1)[1])
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.hasPrefix("--\(boundary)\r\nContent-Disposition: form-data; name=\"tags[]\"\r\n\r\na\r\n"))
        #expect(text.contains("name=\"title\"\r\n\r\nRésumé \"final\"\r\n"))
        #expect(
            text.contains(
                "name=\"document\"; filename=\"\(file.lastPathComponent)\"\r\nContent-Type: text/plain\r\n\r\n"
            )
        )
        #expect(text.contains("name=\"meta\"; filename=\"meta.json\"\r\nContent-Type: application/json\r\n\r\n{}\r\n"))
        #expect(text.hasSuffix("\r\n--\(boundary)--\r\n"))
        let fileStart = try #require(body.firstRange(of: Data("Content-Type: text/plain\r\n\r\n".utf8))).upperBound
        #expect(Data(body[fileStart..<(fileStart + contents.count)]) == contents)
        #expect(MultipartFormData.quoted("a\"b\r\nc") == "a%22b%0D%0Ac")
        var missing = MultipartFormData()
        #expect(throws: SesameError.self) {
            try missing.appendFile(at: URL(fileURLWithPath: "/no/such/file"), name: "f")
        }
    }
}
