import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Sessions over HTTP/2 against nghttpd (nghttp2's server): prior knowledge on plain TCP, ALPN
/// over TLS, many streams on one connection, a connection per full set of streams, uploads
/// through a small window, server trust and client certificates in the handshake.
@Suite(.serialized) struct HTTP2RequestTests {
    static let pki: TestPKI = {
        try! TestPKI()  // safe: nothing can be tested without it
    }()

    static let big = [UInt8]((0..<(1_536 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 11) })

    func session(_ adjust: (inout SessionConfiguration) -> Void = { _ in }) -> Session {
        var configuration = SessionConfiguration.default
        configuration.tls.trustRoots = .anchors([Self.pki.root.certificate])
        configuration.proxy = .none
        configuration.cookieStore = nil
        configuration.credentialStorage = nil
        adjust(&configuration)
        return Session(configuration: configuration)
    }

    @Test func priorKnowledgeCarriesRequestsOverOneConnection() async throws {
        let server = try await NghttpdServer(files: ["big.bin": Self.big, "small.txt": Array("hello h2\n".utf8)])
        defer { server.stop() }
        let events = Recorder<String>()
        let session = session {
            $0.httpVersion = .http2PriorKnowledge
            $0.eventObserver = { event in
                if case .streamOpened(_, let id) = event { events.append("stream \(id)") }
            }
        }
        let base = "http://127.0.0.1:\(server.port)"
        let (big, response) = try await session.data(from: URL(string: "\(base)/big.bin")!)
        #expect(response.status == 200)
        #expect(response.version == "HTTP/2")
        #expect([UInt8](big) == Self.big)
        let (small, _) = try await session.data(from: URL(string: "\(base)/small.txt")!)
        #expect(String(decoding: small, as: UTF8.self) == "hello h2\n")
        let (_, missing) = try await session.data(from: URL(string: "\(base)/missing")!)
        #expect(missing.status == 404)
        #expect(events.all == ["stream 1", "stream 3", "stream 5"], "one connection, streams in order")
        #expect(session.pool.http2ConnectionCount == 1)
    }

    @Test func concurrentRequestsShareStreamsAndOpenMoreConnectionsOnlyWhenFull() async throws {
        let server = try await NghttpdServer(files: ["small.txt": Array("hello h2\n".utf8)], maxConcurrentStreams: 4)
        defer { server.stop() }
        let connected = Recorder<Bool>()
        let session = session {
            $0.httpVersion = .http2PriorKnowledge
            $0.eventObserver = { event in
                if case .connected(_, _, let reused) = event { connected.append(reused) }
            }
        }
        // The first request learns the server's SETTINGS (4 streams at most).
        _ = try await session.data(from: URL(string: "http://127.0.0.1:\(server.port)/small.txt")!)
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<32 {
                group.addTask {
                    let (data, response) = try await session.data(
                        from: URL(string: "http://127.0.0.1:\(server.port)/small.txt")!
                    )
                    #expect(data.count == 9)
                    return response.status
                }
            }
            for try await status in group { #expect(status == 200) }
        }
        let opened = connected.all.filter { !$0 }.count
        #expect(opened >= 2 && opened <= 6, "32 streams, 4 per connection, 6 connections at most: \(opened) opened")
    }

    @Test func uploadsGoThroughASmallWindowAndComeBackWhole() async throws {
        let server = try await NghttpdServer(windowBits: 14, echoUpload: true)
        defer { server.stop() }
        let session = session { $0.httpVersion = .http2PriorKnowledge }
        let upload = [UInt8](Self.big.prefix(1 << 20))
        var request = HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/echo")!)
        request.method = "POST"
        request.body = .data(Data(upload))
        let (echoed, response) = try await session.data(for: request)
        #expect(response.status == 200)
        #expect([UInt8](echoed) == upload)

        // A streamed body of unknown length: HTTP/2 needs no chunked coding.
        let pieces = stride(from: 0, to: upload.count, by: 50_000).map {
            Array(upload[$0..<min($0 + 50_000, upload.count)])
        }
        var streamed = HTTPRequest(url: URL(string: "http://127.0.0.1:\(server.port)/echo")!)
        streamed.method = "PUT"
        streamed.body = .stream(
            length: nil,
            AsyncThrowingStream { continuation in
                for piece in pieces { continuation.yield(piece) }
                continuation.finish()
            }
        )
        let (again, _) = try await session.data(for: streamed)
        #expect([UInt8](again) == upload)
    }

    @Test func alpnPicksHTTP2OverTLSAndTrustIsDecidedAsForHTTP1() async throws {
        let server = try await NghttpdServer(
            files: ["small.txt": Array("hello h2\n".utf8)],
            tls: try Self.pki.leaf()
        )
        defer { server.stop() }
        let url = URL(string: "https://localhost:\(server.port)/small.txt")!
        let alpn = Recorder<String>()
        let session = session {
            $0.eventObserver = { event in
                if case .tlsEstablished(_, let info) = event { alpn.append(info.applicationProtocol ?? "none") }
            }
        }
        let (data, response) = try await session.data(from: url)
        #expect(response.version == "HTTP/2")
        #expect(String(decoding: data, as: UTF8.self) == "hello h2\n")
        #expect(alpn.all == ["h2"])

        // The system roots do not know the test root: refused in the handshake, as over HTTP/1.1.
        var untrusting = SessionConfiguration.default
        untrusting.proxy = .none
        await #expect(throws: SesameError.self) {
            do {
                _ = try await Session(configuration: untrusting).data(from: url)
            } catch let error as SesameError {
                #expect(error.code == .serverTrustRejected, "\(error)")
                throw error
            }
        }
    }

    @Test func aClientCertificateIsAskedForInTheHandshakeOverHTTP2() async throws {
        let server = try await NghttpdServer(
            files: ["small.txt": Array("hello h2\n".utf8)],
            tls: try Self.pki.leaf(),
            requiresClientCertificate: true
        )
        defer { server.stop() }
        let url = URL(string: "https://localhost:\(server.port)/small.txt")!
        await #expect(throws: SesameError.self) {
            do {
                _ = try await session().data(from: url)
            } catch let error as SesameError {
                #expect(error.code == .clientCertificateRequired, "\(error)")
                throw error
            }
        }
        let identity = try Self.pki.clientCertificate().identity()
        let (data, response) = try await session { $0.clientIdentities = ["localhost": identity] }.data(from: url)
        #expect(response.version == "HTTP/2")
        #expect(String(decoding: data, as: UTF8.self) == "hello h2\n")
    }

    @Test func http1PreferenceOffersOnlyHTTP1() async throws {
        // nghttpd speaks only h2 over TLS: offered http/1.1 alone, it ends the handshake.
        let server = try await NghttpdServer(files: ["small.txt": Array("hello h2\n".utf8)], tls: try Self.pki.leaf())
        defer { server.stop() }
        let alpn = Recorder<String>()
        let session = session {
            $0.httpVersion = .http1_1
            $0.eventObserver = { event in
                if case .tlsEstablished(_, let info) = event { alpn.append(info.applicationProtocol ?? "none") }
            }
        }
        _ = try? await session.data(from: URL(string: "https://localhost:\(server.port)/small.txt")!)
        #expect(!alpn.all.contains("h2"))
    }

    @Test func aReaderThatDoesNotReadHoldsAtMostTheStreamWindow() async throws {
        let eight = [UInt8]((0..<(8 << 20)).map { UInt8(truncatingIfNeeded: $0 >> 9) })
        let server = try await NghttpdServer(files: ["eight.bin": eight])
        defer { server.stop() }
        let (connection, http2) = try await loopbackHTTP2Connection(port: server.port)
        http2.start()
        #expect(http2.reserve())
        let id = try await http2.openStream(
            method: "GET",
            scheme: "http",
            authority: "127.0.0.1:\(server.port)",
            path: "/eight.bin",
            fields: [:],
            hasBody: false
        )
        await http2.flush()
        // The server could send 8 MiB; the 1 MiB stream window stops it until the reader takes some.
        let window = HTTP2Session.Limits().streamWindow
        #expect(await eventually { await http2.unconsumedBytes >= window }, "the server filled the window")
        let held = await http2.unconsumedBytes
        #expect(held == window, "\(held) bytes held")
        var received: [UInt8] = []
        reading: while true {
            switch try await http2.next(on: id, timeout: .seconds(10)) {
            case .head(let status, _): #expect(status == 200)
            case .data(let bytes):
                received += bytes
                http2.consumed(bytes.count, on: id)
            case .trailers: break
            case .end: break reading
            }
        }
        #expect(received == eight)
        http2.finish(id)
        await connection.close()
    }

    /// A connection its server retired (GOAWAY after the first stream), its idle timer set for
    /// an hour, is closed and freed once its last stream finishes: neither the idle timer nor its
    /// socket keep it, its session and its buffers for the rest of the hour.
    @Test func aRetiredConnectionIsFreedBeforeItsIdleTimerFires() async throws {
        let server = try HostileHTTP2Server { _ in .goAwayAfterFirstStream }
        defer { server.stop() }
        var connection: Connection?
        var http2: HTTP2Connection?
        (connection, http2) = try await loopbackHTTP2Connection(port: server.port, idleTimeout: .seconds(3600))
        weak let observed = http2
        weak let observedConnection = connection
        try await Self.answerOneRequest(on: try #require(http2), port: server.port)
        http2 = nil
        connection = nil
        // The GOAWAY may come just after the response: a bounded wait for it to be read.
        _ = await eventually { observed == nil && observedConnection == nil }
        #expect(observed == nil, "the retired connection is still held")
        #expect(observedConnection == nil, "its socket is still held")
    }

    private static func answerOneRequest(on http2: HTTP2Connection, port: Int) async throws {
        http2.start()
        #expect(http2.reserve())
        let id = try await http2.openStream(
            method: "GET",
            scheme: "http",
            authority: "127.0.0.1:\(port)",
            path: "/",
            fields: [:],
            hasBody: false
        )
        await http2.flush()
        reading: while true {
            switch try await http2.next(on: id, timeout: .seconds(10)) {
            case .head(let status, _): #expect(status == 200)
            case .data(let bytes): http2.consumed(bytes.count, on: id)
            case .trailers: break
            case .end: break reading
            }
        }
        http2.finish(id)
    }

    @Test func trailersAfterABodyReachTheResponseApartFromItsHeaders() async throws {
        let server = try await NghttpdServer(
            files: ["big.bin": Self.big, "empty.txt": []],
            trailers: [("x-checksum", "crc32=1234abcd"), ("x-records", "3")]
        )
        defer { server.stop() }
        let session = session { $0.httpVersion = .http2PriorKnowledge }
        let base = "http://127.0.0.1:\(server.port)"
        let (big, response) = try await session.data(from: URL(string: "\(base)/big.bin")!)
        #expect([UInt8](big) == Self.big)
        #expect(response.version == "HTTP/2")
        #expect(response.trailers["X-Checksum"] == "crc32=1234abcd")
        #expect(response.trailers["x-records"] == "3")
        #expect(response.headers["x-checksum"] == nil, "trailers are not merged into the header section")
        // Each stream's own trailers, on the same connection.
        let (_, small) = try await session.data(from: URL(string: "\(base)/empty.txt")!)
        #expect(small.status == 200)
        #expect(small.trailers["x-records"] == "3")
        #expect(session.pool.http2ConnectionCount == 1)
    }

    /// Holds on to the first piece of a body until the test says it cancelled the task, and
    /// records the pieces' sizes and how the task ended.
    final class Slow: SessionTaskDelegate {
        let done: Recorder<String>
        let pieces = Recorder<Int>()
        /// Appended to by the test once it cancelled the task.
        let cancelled = Recorder<Bool>()
        init(_ done: Recorder<String>) { self.done = done }
        func session(_ session: Session, task: SessionTask, didReceive data: Data) async {
            pieces.append(data.count)
            _ = await cancelled.reached(1, within: .seconds(60))
        }
        func session(_ session: Session, task: SessionTask, didCompleteWithError error: (any Error)?) async {
            done.append(error.map { "\($0)" } ?? "completed")
        }
    }

    @Test func aCancelledTaskResetsItsStreamAndTheConnectionCarriesTheNext() async throws {
        let server = try await NghttpdServer(files: ["big.bin": Self.big, "small.txt": Array("hello h2\n".utf8)])
        defer { server.stop() }
        let reuses = Recorder<Bool>()
        let session = session {
            $0.httpVersion = .http2PriorKnowledge
            $0.eventObserver = { event in
                if case .connected(_, _, let reused) = event { reuses.append(reused) }
            }
        }
        let base = "http://127.0.0.1:\(server.port)"
        let done = Recorder<String>()
        let slow = Slow(done)
        let task = session.dataTask(with: HTTPRequest(url: URL(string: "\(base)/big.bin")!), delegate: slow)
        task.resume()
        // Cancelled in the middle of the body: some of it came, not all.
        try #require(await slow.pieces.reached(1, within: .seconds(60)))
        task.cancel()
        slow.cancelled.append(true)
        try #require(await done.reached(1, within: .seconds(60)))
        #expect(done.all.first?.contains("cancelled") == true, "\(done.all)")
        #expect(task.countOfBytesReceived < Int64(Self.big.count))
        let (small, _) = try await session.data(from: URL(string: "\(base)/small.txt")!)
        #expect(String(decoding: small, as: UTF8.self) == "hello h2\n")
        #expect(session.pool.http2ConnectionCount == 1)
        #expect(reuses.all.filter { !$0 }.count == 1, "\(reuses.all)")
    }
}
