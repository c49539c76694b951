import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// A session that trusts the test PKI and gives up quickly.
func testSession(_ adjust: (inout SessionConfiguration) -> Void = { _ in }) -> Session {
    var configuration = SessionConfiguration.default
    configuration.tls.trustRoots = .anchors([sharedPKI.root.certificate])
    configuration.credentialStorage = CredentialStorage()
    configuration.requestTimeout = .seconds(10)
    adjust(&configuration)
    return Session(configuration: configuration)
}

func server(
    tls: Bool = false,
    _ handler: @escaping @Sendable (LocalServer.Request) -> LocalServer.Response
) throws
    -> LocalServer
{
    var configuration = LocalServer.Configuration(identity: tls ? try sharedPKI.leaf() : nil)
    configuration.handler = handler
    return try LocalServer(configuration)
}

func url(_ server: LocalServer, _ path: String) -> URL { URL(string: server.baseURL + path)! }

@Suite struct SessionTests {
    @Test(arguments: [false, true])
    func keepAliveReusesOneConnection(tls: Bool) async throws {
        let origin = try server(tls: tls) { request in .text("you asked for \(request.target)") }
        defer { origin.shutdown() }
        let session = testSession()
        for path in ["/one", "/two", "/three"] {
            let (data, response) = try await session.data(from: url(origin, path))
            #expect(response.status == 200)
            #expect(String(decoding: data, as: UTF8.self) == "you asked for \(path)")
        }
        #expect(origin.requests.map(\.connectionIndex) == [0, 0, 0])
        #expect(origin.requests.first?.headers["host"] == "localhost:\(origin.port)")
        #expect(origin.requests.first?.headers["accept-encoding"] == "gzip, deflate, br")
    }

    @Test func chunkedBodiesAndTrailersArrive() async throws {
        let origin = try server { _ in
            .chunked([Array("hello ".utf8), Array("chunked ".utf8), Array("world".utf8)], trailers: [("X-Sum", "1")])
        }
        defer { origin.shutdown() }
        let (data, response) = try await testSession().data(from: url(origin, "/"))
        #expect(String(decoding: data, as: UTF8.self) == "hello chunked world")
        #expect(response.trailers["x-sum"] == "1")
        #expect(response.headers["X-Sum"] == nil, "trailers are not merged into the header section")
    }

    @Test func gzipBodiesAreDecoded() async throws {
        let text = String(repeating: "compressible ", count: 2_000)
        let directory = try temporaryDirectory()
        try Data(text.utf8).write(to: directory.appendingPathComponent("in"))
        try shell("gzip -c '\(directory.path)/in' > '\(directory.path)/out'")
        let gzipped = [UInt8](try Data(contentsOf: directory.appendingPathComponent("out")))
        let origin = try server { _ in
            .chunked(
                [Array(gzipped.prefix(100)), Array(gzipped.dropFirst(100))],
                headers: [("Content-Encoding", "gzip")]
            )
        }
        defer { origin.shutdown() }
        let (data, response) = try await testSession().data(from: url(origin, "/"))
        #expect(String(decoding: data, as: UTF8.self) == text)
        #expect(response.headers["content-encoding"] == "gzip")
    }

    @Test(arguments: [("GZIP", true), ("identity, x-gzip", true), ("gzip, gzip", false), ("zstd", false)])
    func oneKnownContentCodingIsDecoded(coding: String, decoded: Bool) async throws {
        let directory = try temporaryDirectory()
        try Data("plain text".utf8).write(to: directory.appendingPathComponent("in"))
        try shell("gzip -c '\(directory.path)/in' > '\(directory.path)/out'")
        let gzipped = [UInt8](try Data(contentsOf: directory.appendingPathComponent("out")))
        let origin = try server { _ in .chunked([gzipped], headers: [("Content-Encoding", coding)]) }
        defer { origin.shutdown() }
        let (data, _) = try await testSession().data(from: url(origin, "/"))
        #expect((data == Data("plain text".utf8)) == decoded)
        #expect((data == Data(gzipped)) == !decoded)
    }

    @Test func headResponsesHaveNoBody() async throws {
        let origin = try server { _ in .raw("HTTP/1.1 200 OK\r\nContent-Length: 1000\r\n\r\n") }
        defer { origin.shutdown() }
        let session = testSession()
        let (data, response) = try await session.data(for: HTTPRequest(url: url(origin, "/"), method: "HEAD"))
        #expect(data.isEmpty)
        #expect(response.expectedContentLength == 1000)
    }

    @Test func aServerThatSendsGarbageIsAProtocolError() async throws {
        let origin = try server { _ in .raw("SSH-2.0-OpenSSH_9.2\r\n\r\n", thenClose: true) }
        defer { origin.shutdown() }
        let error = await #expect(throws: SesameError.self) { _ = try await testSession().data(from: url(origin, "/")) }
        #expect(error?.code == .protocolError)
        #expect(error?.detail.contains("malformed status line") == true)
    }

    @Test func aServerThatClosesEarlyIsATruncationError() async throws {
        let origin = try server { _ in .raw("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nonly this", thenClose: true)
        }
        defer { origin.shutdown() }
        let error = await #expect(throws: SesameError.self) { _ = try await testSession().data(from: url(origin, "/")) }
        #expect(error?.code == .protocolError)
        #expect(error?.detail.contains("91 body bytes still to come") == true)
    }

    @Test func aStalledServerTimesOut() async throws {
        let origin = try server { _ in .stall }
        defer { origin.shutdown() }
        let session = testSession { $0.requestTimeout = .milliseconds(300) }
        let error = await #expect(throws: SesameError.self) { _ = try await session.data(from: url(origin, "/")) }
        #expect(error?.code == .timeout)
    }

    @Test func theResourceTimeoutBoundsTheWholeTask() async throws {
        let origin = try server { _ in .stall }
        defer { origin.shutdown() }
        let session = testSession { $0.resourceTimeout = .milliseconds(300) }
        let error = await #expect(throws: SesameError.self) { _ = try await session.data(from: url(origin, "/")) }
        #expect(error?.code == .timeout)
        #expect(error?.detail.contains("resource timeout") == true)
    }

    @Test func cancellingMidBodyFreesTheConnection() async throws {
        let origin = try server { request in
            request.target == "/slow"
                ? .raw("HTTP/1.1 200 OK\r\nContent-Length: 1000000\r\n\r\npartial")
                : .text("fine")
        }
        defer { origin.shutdown() }
        let session = testSession { $0.maximumConnectionsPerHost = 1 }
        let started = Recorder<Int>()
        final class FirstBytes: SessionTaskDelegate {
            let started: Recorder<Int>
            init(_ started: Recorder<Int>) { self.started = started }
            func session(
                _ session: Session,
                task: SessionTask,
                didReceive response: HTTPResponse
            ) async -> ResponseDisposition {
                started.append(response.status)
                return .allow
            }
        }
        let task = session.dataTask(with: HTTPRequest(url: url(origin, "/slow")), delegate: FirstBytes(started))
        task.resume()
        try #require(await started.reached(1, within: .seconds(60)))
        task.cancel()
        // With one connection allowed per host, this only succeeds if the cancelled task freed it.
        let (data, _) = try await session.data(from: url(origin, "/after"))
        #expect(String(decoding: data, as: UTF8.self) == "fine")
    }

    @Test func aClosedKeepAliveConnectionIsRetriedForIdempotentRequestsOnly() async throws {
        // The server drops a kept-alive connection as the next request arrives (a close that races
        // the request: the client cannot know before sending): the second request on each
        // connection is closed unanswered.
        let origin = try server { request in
            request.number == 0 ? .text("ok") : .closeConnection
        }
        defer { origin.shutdown() }
        let session = testSession()
        _ = try await session.data(from: url(origin, "/first"))
        let (data, _) = try await session.data(from: url(origin, "/second"))
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        #expect(origin.requests.map(\.connectionIndex) == [0, 0, 1])

        let post = HTTPRequest(url: url(origin, "/post"), method: "POST", body: .data(Data("x".utf8)))
        await #expect(throws: SesameError.self) { _ = try await session.data(for: post) }
        #expect(origin.requests.filter { $0.method == "POST" }.count == 1)
    }

    @Test func aKeptAliveConnectionTheServerClosedWhileIdleIsNotReused() async throws {
        // The server answers as if keeping the connection, then closes it.
        let origin = try server { request in .raw("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", thenClose: true) }
        defer { origin.shutdown() }
        let session = testSession()
        _ = try await session.data(from: url(origin, "/first"))
        // The close reaches the idle connection; a POST (which could not be sent again after a
        // failure) then goes on a new connection instead.
        _ = await eventually(within: .seconds(5)) { session.pool.idleConnectionsKnownClosed > 0 }
        let post = HTTPRequest(url: url(origin, "/post"), method: "POST", body: .data(Data("x".utf8)))
        let (data, _) = try await session.data(for: post)
        #expect(String(decoding: data, as: UTF8.self) == "ok")
        #expect(origin.requests.map(\.connectionIndex) == [0, 1])
    }

    @Test func requestsBeyondThePerHostLimitWaitTheirTurn() async throws {
        let origin = try server { request in LocalServer.Response.text(request.target).delayed(by: .milliseconds(30)) }
        defer { origin.shutdown() }
        let session = testSession { $0.maximumConnectionsPerHost = 2 }
        let bodies = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<6 {
                group.addTask {
                    String(decoding: try await session.data(from: url(origin, "/\(index)")).0, as: UTF8.self)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(Set(bodies) == Set((0..<6).map { "/\($0)" }))
        #expect(Set(origin.requests.map(\.connectionIndex)).count == 2)
    }

    @Test func uploadsFromDataFileAndStream() async throws {
        let origin = try server { request in
            .text("\(request.method) \(request.body.count) \(request.headers["transfer-encoding"] ?? "length")")
        }
        defer { origin.shutdown() }
        let session = testSession()
        let request = HTTPRequest(url: url(origin, "/upload"), method: "PUT")

        let (fromData, _) = try await session.upload(for: request, from: Data(repeating: 7, count: 100_000))
        #expect(String(decoding: fromData, as: UTF8.self) == "PUT 100000 length")

        let file = try temporaryDirectory().appendingPathComponent("body.bin")
        try Data(repeating: 1, count: 300_000).write(to: file)
        let (fromFile, _) = try await session.upload(for: request, fromFile: file)
        #expect(String(decoding: fromFile, as: UTF8.self) == "PUT 300000 length")

        let chunks = AsyncStream<[UInt8]> { continuation in
            for _ in 0..<10 { continuation.yield([UInt8](repeating: 2, count: 1000)) }
            continuation.finish()
        }
        var streamed = request
        streamed.body = .stream(chunks)
        let (fromStream, _) = try await session.data(for: streamed)
        #expect(String(decoding: fromStream, as: UTF8.self) == "PUT 10000 chunked")
    }

    @Test func expectContinueWaitsForTheServer() async throws {
        let origin = try server { request in .text("got \(request.body.count)") }
        defer { origin.shutdown() }
        var request = HTTPRequest(
            url: url(origin, "/"),
            method: "POST",
            body: .data(Data(repeating: 3, count: 200_000))
        )
        request.headers.add(name: "Expect", value: "100-continue")
        let (data, _) = try await testSession().data(for: request)
        #expect(String(decoding: data, as: UTF8.self) == "got 200000")
    }

    @Test func aDownloadToALinkOrADeviceWritesThroughIt() async throws {
        let origin = try server { _ in .text("through") }
        defer { origin.shutdown() }
        let folder = try temporaryDirectory()
        let target = folder.appendingPathComponent("target")
        let link = folder.appendingPathComponent("link")
        try Data("old, longer contents".utf8).write(to: target)
        #expect(symlink(target.path, link.path) == 0)
        _ = try await testSession().download(for: HTTPRequest(url: url(origin, "/")), to: link)
        var status = stat()
        #expect(lstat(link.path, &status) == 0 && status.st_mode & S_IFMT == S_IFLNK, "the link is still a link")
        #expect(String(decoding: try Data(contentsOf: target), as: UTF8.self) == "through")
        _ = try await testSession().download(
            for: HTTPRequest(url: url(origin, "/")),
            to: URL(fileURLWithPath: "/dev/null")
        )
        #expect(stat("/dev/null", &status) == 0 && status.st_mode & S_IFMT == S_IFCHR, "/dev/null is still a device")
    }

    @Test func downloadsLandInPlaceWithProgress() async throws {
        let payload = [UInt8](repeating: 9, count: 500_000)
        let origin = try server { _ in .bytes(payload) }
        defer { origin.shutdown() }
        let destination = try temporaryDirectory().appendingPathComponent("file.bin")
        let progress = Recorder<Int64>()
        let response = try await testSession().download(for: HTTPRequest(url: url(origin, "/")), to: destination) {
            received,
            total in
            progress.append(received)
            #expect(total == 500_000)
        }
        #expect(response.status == 200)
        #expect(try Data(contentsOf: destination) == Data(payload))
        #expect(progress.all.last == 500_000)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: destination.deletingLastPathComponent().path) == [
                "file.bin"
            ]
        )
    }

    @Test func theCompletionHandlerFormStartsOnResume() async throws {
        let origin = try server { _ in .text("handled") }
        defer { origin.shutdown() }
        let session = testSession()
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<String, Never>) in
            let task = session.dataTask(with: HTTPRequest(url: url(origin, "/"))) { data, response, error in
                continuation.resume(
                    returning:
                        "\(response?.status ?? 0) \(data.map { String(decoding: $0, as: UTF8.self) } ?? "") \(error == nil)"
                )
            }
            #expect(task.state == .suspended)
            task.resume()
        }
        #expect(result == "200 handled true")
    }

    @Test func idleConnectionsAreClosedAfterTheIdleTimeout() async throws {
        let origin = try server { _ in .text("ok") }
        defer { origin.shutdown() }
        let session = testSession { $0.idleTimeout = .milliseconds(100) }
        _ = try await session.data(from: url(origin, "/a"))
        // Evicted: the server sees the connection closed before anything else is asked of us.
        // Returns as soon as it is closed; the wait is long for a loaded machine only.
        let closed = await origin.finishedConnections(atLeast: 1, timeout: .seconds(30))
        #expect(closed.first?.finished == true)
        _ = try await session.data(from: url(origin, "/b"))
        #expect(origin.requests.map(\.connectionIndex) == [0, 1])
    }

    final class Collector: SessionTaskDelegate {
        let events = Recorder<String>()
        let done = Gate()
        func session(
            _ session: Session,
            task: SessionTask,
            didReceive response: HTTPResponse
        ) async -> ResponseDisposition {
            events.append("response \(response.status)")
            return .allow
        }
        func session(_ session: Session, task: SessionTask, didReceive data: Data) async {
            events.append("data \(data.count)")
        }
        func session(_ session: Session, task: SessionTask, didCompleteWithError error: (any Error)?) async {
            events.append("complete \(error == nil)")
            done.open()
        }
    }

    @Test func theDelegateFormDeliversResponseDataAndCompletionInOrder() async throws {
        let origin = try server { _ in .chunked([Array("abc".utf8), Array("defg".utf8)]) }
        defer { origin.shutdown() }
        let collector = Collector()
        let session = Session(configuration: testSession().configuration, delegate: collector)
        let task = session.dataTask(with: HTTPRequest(url: url(origin, "/")))
        task.resume()
        await collector.done.wait()
        let events = collector.events.all
        #expect(events.first == "response 200")
        #expect(events.last == "complete true")
        let bytes = events.filter { $0.hasPrefix("data ") }.compactMap { Int($0.dropFirst(5)) }.reduce(0, +)
        #expect(bytes == 7)
        #expect(task.countOfBytesReceived == 7)
        #expect(task.state == .completed)
    }

    final class UploadCounter: SessionTaskDelegate {
        let reports = Recorder<(Int64, Int64, Int64?)>()
        func session(
            _ session: Session,
            task: SessionTask,
            didSendBodyData bytesSent: Int64,
            totalBytesSent: Int64,
            totalBytesExpectedToSend: Int64?
        ) async {
            reports.append((bytesSent, totalBytesSent, totalBytesExpectedToSend))
        }
    }

    /// Body bytes are reported as written: a multipart form of data and a 2 MiB file, then a
    /// stream of unknown length, each adding up to what the server received.
    @Test func uploadProgressIsReportedAsTheBodyIsWritten() async throws {
        let origin = try server { request in .text("\(request.body.count)") }
        defer { origin.shutdown() }
        let counter = UploadCounter()
        let session = Session(configuration: testSession().configuration, delegate: counter)
        let file = try ScratchFolder.make("upload-counter").appendingPathComponent("part.bin")
        try Data(repeating: 1, count: 2 << 20).write(to: file)
        var form = MultipartFormData()
        form.append("value", name: "field")
        try form.appendFile(at: file, name: "file")
        var request = HTTPRequest(url: url(origin, "/form"), method: "POST")
        form.apply(to: &request)
        let (answer, _) = try await session.data(for: request)
        let length = try #require(Int(String(decoding: answer, as: UTF8.self)))
        let reports = counter.reports.all
        #expect(reports.map(\.0).reduce(0, +) == Int64(length))
        #expect(reports.last?.1 == Int64(length))
        #expect(reports.allSatisfy { $0.2 == Int64(length) })

        let streamed = Session(configuration: testSession().configuration, delegate: counter)
        var chunked = HTTPRequest(url: url(origin, "/stream"), method: "POST")
        chunked.body = .stream(
            AsyncStream { continuation in
                for _ in 0..<3 { continuation.yield([UInt8](repeating: 2, count: 1000)) }
                continuation.finish()
            }
        )
        _ = try await streamed.data(for: chunked)
        let streamReports = counter.reports.all.dropFirst(reports.count)
        #expect(streamReports.map(\.1) == [1000, 2000, 3000])
        #expect(streamReports.allSatisfy { $0.2 == nil })
    }

    @Test func unsupportedURLsAreRefused() async throws {
        let error = await #expect(throws: SesameError.self) {
            _ = try await testSession().data(from: URL(string: "ftp://localhost/file")!)
        }
        #expect(error?.code == .unsupportedURL)
    }
}
