import SesameAFNetworking
import SesameTesting
import Testing

extension AFNetworkingTests {
    /// AFHTTPRequestSerializer and AFJSONRequestSerializer as AFNetworking code calls them, checked on
    /// the wire where a server reads the result.
    @Suite struct RequestSerializerTests {
        static let parameters: [String: Any] = [
            "q": "中文",
            "page": 2,
            "b": ["z": 1, "a": ["x", "y"]],
            "flag": true,
            "empty": NSNull(),
            "tags": Set(["b", "a"]),
        ]

        /// GET through a manager: keys sorted, dictionaries nested as `key[sub]`, arrays as `key[]`,
        /// sets as repeated keys, NSNull as the bare key, booleans as 1.
        @Test func getParametersAreSortedAndNestedOnTheWire() async throws {
            let origin = try server { _ in .text("{}", headers: [("Content-Type", "application/json")]) }
            defer { origin.shutdown() }
            let manager = AFHTTPSessionManager(baseURL: URL(string: origin.baseURL + "/api"))
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            let result = await outcome { success, failure in
                manager.get(
                    "search",
                    parameters: Self.parameters,
                    headers: ["X-Trace": "7"],
                    progress: nil,
                    success: success,
                    failure: failure
                )
            }
            #expect(result.object is [String: Any], "\(result)")
            let request = try #require(origin.requests.first)
            #expect(
                request.target
                    == "/api/search?b%5Ba%5D%5B%5D=x&b%5Ba%5D%5B%5D=y&b%5Bz%5D=1&empty&flag=1&page=2&q=%E4%B8%AD%E6%96%87&tags=a&tags=b"
            )
            #expect(request.headers.first("X-Trace") == "7")
            #expect(request.headers.first("Accept-Language") != nil)
            #expect(request.headers.first("User-Agent") != nil)
        }

        /// AFNetworking 3's verbs (no `headers:`) and its `dataTask(with:completionHandler:)`.
        @Test func afNetworking3Forms() async throws {
            let origin = try server { request in
                .text("{\"method\":\"\(request.method)\"}", headers: [("Content-Type", "application/json")])
            }
            defer { origin.shutdown() }
            let manager = AFHTTPSessionManager(baseURL: URL(string: origin.baseURL))
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            func method(_ result: Outcome) -> String? { (result.object as? [String: Any])?["method"] as? String }
            #expect(
                method(
                    await outcome { manager.get("/a", parameters: ["x": 1], progress: nil, success: $0, failure: $1) }
                )
                    == "GET"
            )
            #expect(
                method(
                    await outcome { manager.post("/a", parameters: ["x": 1], progress: nil, success: $0, failure: $1) }
                )
                    == "POST"
            )
            #expect(method(await outcome { manager.put("/a", parameters: nil, success: $0, failure: $1) }) == "PUT")
            #expect(method(await outcome { manager.patch("/a", parameters: nil, success: $0, failure: $1) }) == "PATCH")
            #expect(
                method(await outcome { manager.delete("/a", parameters: nil, success: $0, failure: $1) }) == "DELETE"
            )
            let request = try manager.requestSerializer.request(
                withMethod: "GET",
                urlString: origin.baseURL + "/b",
                parameters: nil
            )
            let object: Any? = await withCheckedContinuation { continuation in
                manager.dataTask(with: request) { _, object, _ in continuation.resume(returning: object) }.resume()
            }
            #expect((object as? [String: Any])?["method"] as? String == "GET")
        }

        /// With GB18030 as `stringEncoding`, parameters are written in GB18030 before percent-encoding
        /// (a form body too, whose Content-Type names the charset).
        @Test func gb18030StringEncoding() throws {
            let serializer = AFHTTPRequestSerializer()
            serializer.stringEncoding = CFStringConvertEncodingToNSStringEncoding(
                CFStringEncoding(CFStringEncodings.GB_18030_2000.rawValue)
            )
            let get = try serializer.request(
                withMethod: "GET",
                urlString: "http://localhost/s?x=1",
                parameters: ["q": "中文"]
            )
            #expect(get.url?.absoluteString == "http://localhost/s?x=1&q=%D6%D0%CE%C4")
            let post = try serializer.request(
                withMethod: "POST",
                urlString: "http://localhost/s",
                parameters: ["q": "中文"]
            )
            #expect(post.httpBody == Data("q=%D6%D0%CE%C4".utf8))
            #expect(
                post.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded; charset=gb18030"
            )
            let utf8 = try AFHTTPRequestSerializer().request(
                withMethod: "POST",
                urlString: "http://localhost/s",
                parameters: ["q": "中文"]
            )
            #expect(utf8.value(forHTTPHeaderField: "Content-Type") == "application/x-www-form-urlencoded")
            // GB18030 covers Unicode; Big5 has no emoji, and the request is refused, not mangled.
            serializer.stringEncoding = CFStringConvertEncodingToNSStringEncoding(kCFStringEncodingBig5)
            #expect(throws: (any Error).self) {
                try serializer.request(withMethod: "GET", urlString: "http://localhost/", parameters: ["face": "😀"])
            }
        }

        @Test func requestSerializerSettingsAndErrors() throws {
            let serializer = AFHTTPRequestSerializer()
            serializer.setValue("token", forHTTPHeaderField: "X-Api-Key")
            serializer.timeoutInterval = 12
            serializer.httpMethodsEncodingParametersInURI = ["GET", "HEAD"]
            serializer.setAuthorizationHeaderFieldWithUsername("ada", password: "pässword")
            let delete = try serializer.request(
                withMethod: "DELETE",
                urlString: "http://localhost/item",
                parameters: ["id": 3]
            )
            #expect(delete.url?.absoluteString == "http://localhost/item")
            #expect(delete.httpBody == Data("id=3".utf8))
            #expect(delete.timeoutInterval == 12)
            #expect(delete.value(forHTTPHeaderField: "X-Api-Key") == "token")
            #expect(
                delete.value(forHTTPHeaderField: "Authorization") == "Basic "
                    + Data("ada:pässword".utf8).base64EncodedString()
            )

            // A user name with a colon cannot be sent in Basic: the serializer refuses to make requests.
            serializer.setAuthorizationHeaderFieldWithUsername("a:b", password: "x")
            #expect(serializer.value(forHTTPHeaderField: "Authorization") == nil)
            #expect(throws: (any Error).self) {
                try serializer.request(withMethod: "GET", urlString: "http://localhost/", parameters: nil)
            }
            serializer.clearAuthorizationHeader()
            _ = try serializer.request(withMethod: "GET", urlString: "http://localhost/", parameters: nil)

            do {
                _ = try serializer.request(withMethod: "GET", urlString: "not a url", parameters: nil)
                Issue.record("a bad URL was taken")
            } catch let error as NSError {
                #expect(error.domain == AFURLRequestSerializationErrorDomain)
                #expect(error.code == NSURLErrorBadURL)
            }
            #expect(throws: (any Error).self) {
                try serializer.request(
                    withMethod: "GET",
                    urlString: "http://localhost/",
                    parameters: ["not", "a", "dictionary"]
                )
            }
            serializer.setQueryStringSerializationWith { _, parameters, _ in
                "custom=\((parameters as? [String: Any])?.count ?? 0)"
            }
            let custom = try serializer.request(
                withMethod: "GET",
                urlString: "http://localhost/",
                parameters: ["a": 1, "b": 2]
            )
            #expect(custom.url?.query == "custom=2")
        }

        /// POST with AFJSONRequestSerializer: a JSON body the server parses, answered with JSON that
        /// AFJSONResponseSerializer turns into a dictionary.
        @Test func postJSON() async throws {
            let origin = try server { request in
                let echoed = (try? JSONSerialization.jsonObject(with: Data(request.body))) as? [String: Any] ?? [:]
                let answer = try! JSONSerialization.data(withJSONObject: [
                    "type": request.headers.first("Content-Type") ?? "", "name": echoed["name"] ?? "",
                    "count": (echoed["list"] as? [Any])?.count ?? -1,
                ])
                return .bytes([UInt8](answer), headers: [("Content-Type", "application/json; charset=utf-8")])
            }
            defer { origin.shutdown() }
            let manager = AFHTTPSessionManager(baseURL: URL(string: origin.baseURL))
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            manager.requestSerializer = AFJSONRequestSerializer()
            let result = await outcome { success, failure in
                manager.post(
                    "/items",
                    parameters: ["name": "中文", "list": [1, 2, 3], "nested": ["ok": true]],
                    headers: nil,
                    progress: nil,
                    success: success,
                    failure: failure
                )
            }
            let object = try #require(result.object as? [String: Any], "\(result)")
            #expect(object["type"] as? String == "application/json")
            #expect(object["name"] as? String == "中文")
            #expect(object["count"] as? Int == 3)
            #expect(origin.requests.first?.method == "POST")

            // What JSON cannot hold is refused before anything is sent, in AFNetworking's domain.
            let refused = await outcome { success, failure in
                manager.post(
                    "/items",
                    parameters: ["date": Date()],
                    headers: nil,
                    progress: nil,
                    success: success,
                    failure: failure
                )
            }
            #expect(refused.error?.domain == AFURLRequestSerializationErrorDomain, "\(refused)")
            #expect(origin.requests.count == 1)
        }
    }
}
