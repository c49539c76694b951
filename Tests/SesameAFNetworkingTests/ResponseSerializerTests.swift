import SesameAFNetworking
import SesameTesting
import Testing

extension AFNetworkingTests {
    /// AFJSONResponseSerializer's and AFHTTPResponseSerializer's refusals, with AFNetworking's keys.
    @Suite struct ResponseSerializerTests {
        static func origin() throws -> LocalServer {
            try server { request in
                switch request.target {
                case "/html": return .text("<html>hi</html>", headers: [("Content-Type", "text/html")])
                case "/missing":
                    return .text(#"{"error":"gone"}"#, status: 404, headers: [("Content-Type", "application/json")])
                case "/broken": return .text(#"{"error":"#, headers: [("Content-Type", "application/json")])
                case "/space": return .text(" ", headers: [("Content-Type", "application/json")])
                case "/nulls":
                    return .text(#"{"a":null,"b":[{"c":null,"d":1}]}"#, headers: [("Content-Type", "text/json")])
                default: return .text("{}", headers: [("Content-Type", "application/json")])
                }
            }
        }

        @Test func jsonSerializerRefusesAWrongContentType() async throws {
            let origin = try Self.origin()
            defer { origin.shutdown() }
            let manager = AFHTTPSessionManager(baseURL: URL(string: origin.baseURL))
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            let result = await outcome { success, failure in
                manager.get("/html", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
            }
            let error = try #require(result.error, "\(result)")
            #expect(error.domain == AFURLResponseSerializationErrorDomain)
            #expect(error.code == NSURLErrorCannotDecodeContentData)
            #expect(error.localizedDescription == "Request failed: unacceptable content-type: text/html")
            #expect(
                (error.userInfo[AFNetworkingOperationFailingURLResponseErrorKey] as? HTTPURLResponse)?.statusCode == 200
            )
            #expect(
                error.userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] as? Data
                    == Data("<html>hi</html>".utf8)
            )
            #expect((error.userInfo[NSURLErrorFailingURLErrorKey] as? URL)?.path == "/html")

            // Accepting the type, as AFNetworking code does, lets it through to the parser.
            manager.responseSerializer.acceptableContentTypes?.insert("text/html")
            let parsed = await outcome { success, failure in
                manager.get("/html", parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
            }
            #expect(parsed.error?.domain != AFURLResponseSerializationErrorDomain, "\(parsed)")
            #expect(
                parsed.error?.userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] as? Data
                    == Data("<html>hi</html>".utf8)
            )
        }

        @Test func statusCodesBodiesAndNulls() async throws {
            let origin = try Self.origin()
            defer { origin.shutdown() }
            let manager = AFHTTPSessionManager(baseURL: URL(string: origin.baseURL))
            defer { manager.invalidateSessionCancelingTasks(true, resetSession: false) }
            func get(_ path: String) async -> Outcome {
                await outcome { success, failure in
                    manager.get(path, parameters: nil, headers: nil, progress: nil, success: success, failure: failure)
                }
            }
            let missing = await get("/missing")
            #expect(missing.error?.domain == AFURLResponseSerializationErrorDomain)
            #expect(missing.error?.code == NSURLErrorBadServerResponse)
            #expect(missing.error?.localizedDescription == "Request failed: not found (404)")
            #expect(
                missing.error?.userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] as? Data
                    == Data(#"{"error":"gone"}"#.utf8)
            )

            let broken = await get("/broken")
            #expect(
                broken.error?.userInfo[AFNetworkingOperationFailingURLResponseDataErrorKey] as? Data
                    == Data(#"{"error":"#.utf8),
                "\(broken)"
            )

            let space = await get("/space")
            #expect(space.error == nil, "\(space)")
            #expect(space.object == nil)

            let serializer = AFJSONResponseSerializer()
            serializer.removesKeysWithNullValues = true
            manager.responseSerializer = serializer
            let nulls = try #require(await get("/nulls").object as? [String: Any])
            #expect(nulls["a"] == nil)
            let inner = try #require((nulls["b"] as? [[String: Any]])?.first)
            #expect(inner["c"] == nil && inner["d"] as? Int == 1)

            // The compound serializer takes the first that gives an object: JSON, else the bytes.
            manager.responseSerializer = AFCompoundResponseSerializer.compoundSerializer(withResponseSerializers: [
                AFJSONResponseSerializer(), AFHTTPResponseSerializer(),
            ])
            #expect(await get("/html").object as? Data == Data("<html>hi</html>".utf8))
            #expect(await get("/ok").object is [String: Any])

            let codes = AFHTTPResponseSerializer()
            codes.acceptableStatusCodes = IndexSet(integer: 404)
            manager.responseSerializer = codes
            #expect(await get("/missing").object as? Data == Data(#"{"error":"gone"}"#.utf8))
        }
    }
}
