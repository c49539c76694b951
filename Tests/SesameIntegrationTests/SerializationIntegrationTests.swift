import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Serializers and cookies against httpbin, through the library and through `sesame`.
@Suite(.serialized) struct SerializationIntegrationTests {
    func session() -> Session {
        var configuration = SessionConfiguration.default
        configuration.cookieStore = CookieStore()
        configuration.credentialStorage = CredentialStorage()
        configuration.proxy = .none
        return Session(configuration: configuration)
    }

    struct Echo: Decodable, Sendable {
        let form: [String: String]
        let args: [String: String]
        let headers: [String: String]
    }

    @Test func httpbinSeesFormsQueriesJSONAndMultipart() async throws {
        let httpbin = try await HttpbinServer()
        defer { httpbin.stop() }
        let session = session()
        let serializer = HTTPRequestSerializer()
        let post = try serializer.request(
            method: "POST",
            url: URL(string: httpbin.baseURL + "/post")!,
            parameters: ["name": "Ada Lovelace", "lang": "中文", "n": 1]
        )
        let (echo, _) = try await session.data(for: post, serializer: DecodableResponseSerializer(Echo.self))
        #expect(echo.form == ["name": "Ada Lovelace", "lang": "中文", "n": "1"])
        let get = try serializer.request(
            method: "GET",
            url: URL(string: httpbin.baseURL + "/anything")!,
            parameters: ["q": "a b&c"]
        )
        let (anything, _) = try await session.data(for: get, serializer: DecodableResponseSerializer(Echo.self))
        #expect(anything.args == ["q": "a b&c"])

        let json = try JSONRequestSerializer().request(
            method: "POST",
            url: URL(string: httpbin.baseURL + "/anything")!,
            parameters: ["user": ["id": 7, "tags": ["x"]], "ok": true]
        )
        let (value, _) = try await session.data(for: json, serializer: JSONResponseSerializer())
        #expect(
            value["json"]
                == .object(["user": .object(["id": .integer(7), "tags": .array([.string("x")])]), "ok": .bool(true)])
        )

        // A brotli body (httpbin's /brotli, encoded by its brotli library) is decoded on the way in.
        let (brotli, brotliResponse) = try await session.data(
            for: HTTPRequest(url: URL(string: httpbin.baseURL + "/brotli")!),
            serializer: JSONResponseSerializer()
        )
        #expect(brotliResponse.headers.first("Content-Encoding") == "br")
        #expect(brotli["brotli"] == .bool(true))

        let file = FileManager.default.temporaryDirectory.appendingPathComponent("note-\(UUID().uuidString).txt")
        try Data("file contents\n".utf8).write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let multipart = try serializer.multipartRequest(
            url: URL(string: httpbin.baseURL + "/post")!,
            parameters: ["field": "value"]
        ) { try $0.appendFile(at: file, name: "upload") }
        let (uploaded, _) = try await session.data(for: multipart, serializer: JSONResponseSerializer())
        #expect(uploaded["form"]?["field"] == .string("value"))
        #expect(uploaded["files"]?["upload"] == .string("file contents\n"))

        let status = try serializer.request(
            method: "GET",
            url: URL(string: httpbin.baseURL + "/status/418")!,
            parameters: nil
        )
        let error = await #expect(throws: ResponseSerializationError.self) {
            _ = try await session.data(for: status, serializer: DataResponseSerializer())
        }
        #expect(error?.response.status == 418)
    }

    @Test func httpbinCookiesAreKeptAndSentBack() async throws {
        let httpbin = try await HttpbinServer()
        defer { httpbin.stop() }
        let session = session()
        // /cookies/set answers with Set-Cookie and a redirect to /cookies, which echoes them.
        let (value, _) = try await session.data(
            for: HTTPRequest(url: URL(string: httpbin.baseURL + "/cookies/set?flavour=oatmeal&n=1")!),
            serializer: JSONResponseSerializer()
        )
        #expect(value["cookies"] == .object(["flavour": .string("oatmeal"), "n": .string("1")]))
        let (deleted, _) = try await session.data(
            for: HTTPRequest(url: URL(string: httpbin.baseURL + "/cookies/delete?flavour")!),
            serializer: JSONResponseSerializer()
        )
        #expect(deleted["cookies"] == .object(["n": .string("1")]))
    }

    @Test func theCommandLineSerializes() async throws {
        let httpbin = try await HttpbinServer()
        defer { httpbin.stop() }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cli-ser-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }

        let form = try await runSesame([
            "--data-urlencode", "name=Ada L&co", "--data-urlencode", "lang=中文", httpbin.baseURL + "/post",
        ])
        #expect(form.status == 0, "\(form.stderr)")
        #expect(form.stdout.contains(#""name": "Ada L&co""#), "\(form.stdout)")
        #expect(
            form.stdout.contains(#""lang": "\u4e2d\u6587""#) || form.stdout.contains(#""lang": "中文""#),
            "\(form.stdout)"
        )

        let upload = directory.appendingPathComponent("up.txt")
        try Data("uploaded bytes".utf8).write(to: upload)
        let multipart = try await runSesame([
            "-F", "field=v", "-F", "doc=@\(upload.path);type=text/plain", httpbin.baseURL + "/post",
        ])
        #expect(multipart.status == 0, "\(multipart.stderr)")
        #expect(multipart.stdout.contains(#""doc": "uploaded bytes""#), "\(multipart.stdout)")
        #expect(multipart.stdout.contains(#""field": "v""#))

        let json = try await runSesame(["--json", #"{"a":[1,2]}"#, httpbin.baseURL + "/anything"])
        #expect(json.stdout.contains(#""Content-Type": "application/json""#), "\(json.stdout)")
        #expect(json.stdout.contains(#""a": ["#), "\(json.stdout)")
        let both = try await runSesame(["--json", "{}", "-d", "a=b", httpbin.baseURL + "/anything"])
        #expect(both.status == 2)

        let jar = directory.appendingPathComponent("jar.txt").path
        let set = try await runSesame(["-L", "-c", jar, httpbin.baseURL + "/cookies/set?k=v"])
        #expect(set.status == 0, "\(set.stderr)")
        let saved = readText(jar)
        #expect(saved.contains("127.0.0.1\tFALSE\t/\tFALSE\t0\tk\tv"), "\(saved)")
        let sent = try await runSesame(["-b", jar, httpbin.baseURL + "/cookies"])
        #expect(sent.stdout.contains(#""k": "v""#), "\(sent.stdout)")
        let literal = try await runSesame(["-b", "x=1; y=2", httpbin.baseURL + "/cookies"])
        #expect(literal.stdout.contains(#""x": "1""#) && literal.stdout.contains(#""y": "2""#), "\(literal.stdout)")
        let none = try await runSesame([httpbin.baseURL + "/cookies"])
        #expect(none.stdout.contains(#""cookies": {}"#), "no cookie engine without -b or -c: \(none.stdout)")
    }

    @Test func charsetsOnTheCommandLine() async throws {
        let body = Array("name=%D5%C5%C8%FD".utf8)  // 张三 in GB18030
        let answer = try TextEncoding.gb18030.encode("你好，张三")
        var server = LocalServer.Configuration.plainHTTP
        server.handler = { request in
            guard request.body == body, request.headers["Content-Type"]?.contains("charset=gb18030") == true else {
                return .text("bad body \(request.body)", status: 400)
            }
            return .bytes(answer, headers: [("Content-Type", "text/plain; charset=GB18030")])
        }
        let origin = try LocalServer(server)
        defer { origin.shutdown() }
        let url = "http://127.0.0.1:\(origin.port)/greet"
        let decoded = try await runSesame([
            "--charset", "GB18030", "--data-urlencode", "name=张三", "--decode-charset", "auto", url,
        ])
        #expect(decoded.status == 0, "\(decoded.stderr)")
        #expect(decoded.stdout == "你好，张三")
        let raw = try await runSesame(["--charset", "GB18030", "--data-urlencode", "name=张三", url])
        #expect(Array(raw.stdout.utf8) != Array("你好，张三".utf8), "without --decode-charset the bytes are as sent")
        let wrong = try await runSesame([
            "--charset", "GB18030", "--data-urlencode", "name=张三", "--decode-charset", "UTF-8", url,
        ])
        #expect(wrong.status == 1, "\(wrong.stderr)")
        #expect(wrong.stderr.contains("not valid UTF-8"), "\(wrong.stderr)")
        let unknown = try await runSesame(["--charset", "klingon", "-d", "a", url])
        #expect(unknown.status == 2)
        let unencodable = try await runSesame(["--charset", "ISO-8859-1", "--data-urlencode", "n=张", url])
        #expect(unencodable.status == 2)
        #expect(unencodable.stderr.contains("cannot be written in ISO-8859-1"), "\(unencodable.stderr)")
    }
}
