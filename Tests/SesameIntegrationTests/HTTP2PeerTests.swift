import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// The HTTP/2 session against nghttpd, nghttp2's own server, over a plain loopback connection
/// (prior knowledge): concurrent streams, windows that open as bodies are consumed, and an
/// upload that waits for a small window. The session is not wired into `Session` yet; this drives
/// it by hand, as a connection's pump does: on the event loop, from the connect on. nghttpd sends
/// GOAWAY SETTINGS_TIMEOUT and closes when its SETTINGS is not acknowledged within 10 s, and on
/// the concurrency pool a test waits behind every other suite's work (a CI run under
/// ThreadSanitizer lost the connection so).
@Suite struct HTTP2PeerTests {
    struct Answer {
        var status = 0
        var fields = HTTPHeaders()
        var body: [UInt8] = []
        var ended = false
        var reset: UInt32?
    }

    /// Moves frames between `session` and `connection` until every stream in `streams` ended or
    /// was reset, feeding each upload as far as the peer's window lets it go.
    func exchange(
        _ session: HTTP2Session,
        over connection: Connection,
        streams: [Int32],
        uploads: [Int32: [UInt8]] = [:]
    ) async throws -> [Int32: Answer] {
        var answers: [Int32: Answer] = [:]
        var left = uploads
        for _ in 0..<100_000 {
            for (stream, bytes) in left where session.bufferedBody(on: stream) < 65_536 {
                let piece = Array(bytes.prefix(32_768))
                session.sendBody(piece, on: stream, end: piece.count == bytes.count)
                left[stream] = piece.count == bytes.count ? nil : Array(bytes.dropFirst(piece.count))
            }
            var output: [UInt8] = []
            try session.drainOutput(into: &output)
            if !output.isEmpty { try await connection.write(output) }
            if streams.allSatisfy({ answers[$0]?.ended == true || answers[$0]?.reset != nil }) { return answers }
            let bytes = try await connection.read(maxLength: 65_536, timeout: .seconds(10))
            if bytes.isEmpty { throw SesameError(.connectionClosed, "nghttpd closed the connection") }
            for event in try session.receive(bytes) {
                switch event {
                case .head(let stream, let status, let fields) where status >= 200:
                    answers[stream, default: Answer()].status = status
                    answers[stream, default: Answer()].fields = fields
                case .data(let stream, let data):
                    answers[stream, default: Answer()].body += data
                    session.consumed(data.count, on: stream)
                case .end(let stream):
                    answers[stream, default: Answer()].ended = true
                case .reset(let stream, let code, _):
                    answers[stream, default: Answer()].reset = code
                default:
                    break
                }
            }
        }
        throw SesameError(.timeout, "the exchange did not settle")
    }

    func request(
        _ session: HTTP2Session,
        _ method: String,
        _ path: String,
        port: Int,
        body: Bool = false
    ) throws -> Int32 {
        try session.submitRequest(
            method: method,
            scheme: "http",
            authority: "127.0.0.1:\(port)",
            path: path,
            fields: HTTPHeaders(),
            hasBody: body
        )
    }

    @Test func concurrentStreamsCarryLargeBodiesIntactAsTheyAreConsumed() async throws {
        let big = (0..<(3 << 19)).map { UInt8(truncatingIfNeeded: ($0 &* 2_654_435_761) >> 11) }
        let server = try await NghttpdServer(files: ["big.bin": big, "small.txt": Array("small\n".utf8)])
        defer { server.stop() }
        let (answers, streams, maxStreams) = try await withTaskExecutorPreference(EventLoop.shared) {
            let connection = try await Connection.connect(host: "127.0.0.1", port: server.port, tls: nil)
            defer { Task { await connection.close() } }
            let session = try HTTP2Session()
            let streams = try ["/big.bin", "/small.txt", "/big.bin", "/missing"].map {
                try request(session, "GET", $0, port: server.port)
            }
            let answers = try await exchange(session, over: connection, streams: streams)
            return (answers, streams, session.peerMaxConcurrentStreams)
        }
        #expect(answers[streams[0]]?.status == 200)
        #expect(answers[streams[0]]?.body == big, "1.5 MiB through a 1 MiB stream window")
        #expect(answers[streams[2]]?.body == big)
        #expect(answers[streams[1]]?.body == Array("small\n".utf8))
        #expect(answers[streams[3]]?.status == 404)
        #expect(maxStreams == 100, "nghttpd's SETTINGS_MAX_CONCURRENT_STREAMS")
    }

    @Test func anUploadWaitsForASmallWindowAndComesBackWhole() async throws {
        let server = try await NghttpdServer(windowBits: 14, echoUpload: true)  // a 16 KiB window
        defer { server.stop() }
        let upload = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ ($0 >> 13)) }
        let (answers, stream) = try await withTaskExecutorPreference(EventLoop.shared) {
            let connection = try await Connection.connect(host: "127.0.0.1", port: server.port, tls: nil)
            defer { Task { await connection.close() } }
            let session = try HTTP2Session()
            let stream = try request(session, "POST", "/echo", port: server.port, body: true)
            let answers = try await exchange(session, over: connection, streams: [stream], uploads: [stream: upload])
            return (answers, stream)
        }
        #expect(answers[stream]?.status == 200)
        #expect(answers[stream]?.body == upload)
    }
}
