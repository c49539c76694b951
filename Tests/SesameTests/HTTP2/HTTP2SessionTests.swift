import Foundation
import Testing

@testable import Sesame

/// The HTTP/2 session in memory against a server written frame by frame: requests and answers,
/// flow control that follows what was consumed, request bodies held by the peer's window, and a
/// hostile peer's frames (huge header blocks, endless CONTINUATION, a SETTINGS flood, resets,
/// GOAWAY) with bounded memory and clear errors.
// Serialized: these synchronous tests hold a concurrency thread while they run; one at a time,
// they leave the other threads to the tests that wait on the loop and on child processes.
@Suite(.serialized) struct HTTP2SessionTests {
    typealias Peer = HTTP2TestPeer

    /// A session that has sent its preface and taken the server's SETTINGS.
    func started(_ settings: [(UInt16, UInt32)] = [(3, 100)]) throws -> (HTTP2Session, Peer) {
        let session = try HTTP2Session()
        let peer = Peer()
        _ = peer.frames(from: try session.output())
        let events = try session.receive(Peer.settingsFrame(settings) + Peer.frame(Peer.settings, flags: Peer.ack))
        #expect(events.contains(.settings(maxConcurrentStreams: Int(settings.first { $0.0 == 3 }?.1 ?? UInt32.max))))
        _ = peer.frames(from: try session.output())  // the SETTINGS acknowledgement
        return (session, peer)
    }

    /// Submits a GET and sends its HEADERS (a stream opens when its first frame goes out).
    func get(
        _ session: HTTP2Session,
        _ path: String = "/",
        fields: HTTPHeaders = HTTPHeaders(),
        send: Bool = true
    ) throws
        -> Int32
    {
        let stream = try session.submitRequest(
            method: "GET",
            scheme: "https",
            authority: "localhost:8443",
            path: path,
            fields: fields,
            hasBody: false
        )
        if send { _ = try session.output() }
        return stream
    }

    @Test func theClientSpeaksFirstWithItsSettingsThenARequestAndReadsTheAnswer() throws {
        let session = try HTTP2Session()
        let peer = Peer()
        let opening = peer.frames(from: try session.output())
        let settings = try #require(opening.first)
        #expect(settings.type == Peer.settings)
        // ENABLE_PUSH 0, INITIAL_WINDOW_SIZE 1 MiB, MAX_HEADER_LIST_SIZE 64 KiB.
        #expect(settings.payload == [0, 2, 0, 0, 0, 0, 0, 4, 0, 0x10, 0, 0, 0, 6, 0, 1, 0, 0])
        #expect(
            opening.contains { $0.type == Peer.windowUpdate && $0.stream == 0 },
            "the connection window grows to 4 MiB"
        )

        var fields = HTTPHeaders()
        fields.add(name: "Accept", value: "text/plain")
        fields.add(name: "Connection", value: "keep-alive")
        fields.add(name: "Host", value: "localhost:8443")
        fields.add(name: "TE", value: "gzip")
        let stream = try get(session, "/hello?x=1", fields: fields, send: false)
        #expect(stream == 1)
        let request = try #require(peer.frames(from: try session.output()).first { $0.type == Peer.headers })
        #expect(request.flags & Peer.endStream != 0, "a GET ends its stream with its head")
        let sent = peer.fields(of: request)
        #expect(sent.map(\.0) == [":method", ":scheme", ":authority", ":path", "accept"])
        #expect(sent.map(\.1) == ["GET", "https", "localhost:8443", "/hello?x=1", "text/plain"])

        let answer =
            Peer.settingsFrame([(3, 7)])
            + Peer.headersFrame(stream: 1, fields: [("content-type", "text/plain")])
            + Peer.dataFrame(stream: 1, Array("hello".utf8), endStream: true)
        var expected = HTTPHeaders()
        expected.add(name: "content-type", value: "text/plain")
        #expect(
            try session.receive(answer) == [
                .settings(maxConcurrentStreams: 7), .head(stream: 1, status: 200, fields: expected),
                .data(stream: 1, Array("hello".utf8)), .end(stream: 1),
            ]
        )
        #expect(session.peerMaxConcurrentStreams == 7)
        #expect(peer.frames(from: try session.output()).contains { $0.type == Peer.settings && $0.flags == Peer.ack })
    }

    @Test func informationalHeadsAndTrailersAreTheirOwnEvents() throws {
        let (session, _) = try started()
        let stream = try get(session)
        let frames =
            Peer.headersFrame(stream: stream, status: 103, fields: [("link", "</a.css>; rel=preload")])
            + Peer.headersFrame(stream: stream) + Peer.dataFrame(stream: stream, [1, 2, 3])
            + Peer.headersFrame(stream: stream, status: nil, fields: [("grpc-status", "0")], endStream: true)
        let events = try session.receive(frames)
        var trailers = HTTPHeaders()
        trailers.add(name: "grpc-status", value: "0")
        #expect(events.count == 5)
        guard events.count == 5 else { return }
        #expect({ if case .head(_, 103, _) = events[0] { true } else { false } }())
        #expect({ if case .head(_, 200, _) = events[1] { true } else { false } }())
        #expect(events[3] == .trailers(stream: stream, trailers))
        #expect(events[4] == .end(stream: stream))
    }

    @Test func windowsOpenOnlyAsTheOwnerConsumes() throws {
        let (session, peer) = try started()
        let stream = try get(session)
        _ = peer.frames(from: try session.output())
        var bytes = Peer.headersFrame(stream: stream)
        for _ in 0..<40 { bytes += Peer.dataFrame(stream: stream, [UInt8](repeating: 7, count: 16_384)) }
        _ = try session.receive(bytes)
        #expect(
            !peer.frames(from: try session.output()).contains { $0.type == Peer.windowUpdate },
            "nothing consumed yet"
        )
        // Past half the stream's window (nghttp2 batches updates that way), consuming reopens it.
        session.consumed(40 * 16_384, on: stream)
        let updates = peer.frames(from: try session.output()).filter { $0.type == Peer.windowUpdate }
        #expect(updates.contains { $0.stream == stream }, "consuming reopens the stream's window")

        // A peer that sends past the stream's window (1 MiB) breaks flow control: that stream ends.
        let other = try get(session, "/more")
        var flood = Peer.headersFrame(stream: other)
        for _ in 0..<65 { flood += Peer.dataFrame(stream: other, [UInt8](repeating: 1, count: 16_384)) }
        let events = try session.receive(flood) + session.outputAndEvents().events
        #expect(events.contains { if case .reset(other, 3, _) = $0 { true } else { false } }, "FLOW_CONTROL_ERROR")
    }

    @Test func aRequestBodyGoesOutAsThePeersWindowAllows() throws {
        let (session, peer) = try started([(3, 100), (4, 1000)])  // INITIAL_WINDOW_SIZE 1000
        let stream = try session.submitRequest(
            method: "POST",
            scheme: "https",
            authority: "localhost",
            path: "/up",
            fields: HTTPHeaders(),
            hasBody: true
        )
        session.sendBody([UInt8](repeating: 0x61, count: 5000), on: stream, end: true)
        var frames = peer.frames(from: try session.output())
        #expect(frames.filter { $0.type == Peer.data }.reduce(0) { $0 + $1.payload.count } == 1000)
        #expect(session.bufferedBody(on: stream) == 4000)
        _ = try session.receive(Peer.windowUpdateFrame(stream: stream, increment: 4000))
        frames = peer.frames(from: try session.output()).filter { $0.type == Peer.data }
        #expect(frames.reduce(0) { $0 + $1.payload.count } == 4000)
        #expect(frames.last?.flags == Peer.endStream)
        #expect(session.bufferedBody(on: stream) == 0)
    }

    @Test func aHugeHeaderBlockResetsItsStreamAndOthersGoOn() throws {
        let (session, peer) = try started()
        let first = try get(session, "/huge")
        let second = try get(session, "/fine")
        _ = peer.frames(from: try session.output())
        let fields = (0..<100).map { ("x-filler-\($0)", String(repeating: "v", count: 1000)) }
        let block = Peer.block([(":status", "200")] + fields)
        var bytes: [UInt8] = []
        var chunks = stride(from: 0, to: block.count, by: 16_000).map {
            Array(block[$0..<min($0 + 16_000, block.count)])
        }
        let last = chunks.removeLast()
        bytes += Peer.frame(Peer.headers, stream: first, chunks.removeFirst())
        for chunk in chunks { bytes += Peer.frame(Peer.continuation, stream: first, chunk) }
        bytes += Peer.frame(Peer.continuation, flags: Peer.endHeaders, stream: first, last)
        bytes += Peer.headersFrame(stream: second, endStream: true)
        let received = try session.receive(bytes)
        let (out, later) = try session.outputAndEvents()
        let events = received + later
        #expect(peer.frames(from: out).contains { $0.type == Peer.rstStream && $0.stream == first })
        let reset = events.first { if case .refused(first, _) = $0 { true } else { false } }
        guard case .refused(_, let reason) = reset else {
            Issue.record("the huge block did not reset its stream: \(events.map { "\($0)".prefix(80) })")
            return
        }
        #expect(reason.contains("65536 bytes"))
        #expect(events.contains(.end(stream: second)))
        #expect(session.incomingHeaders.isEmpty, "nothing of the refused block is kept")
        let closings = events.filter {
            switch $0 {
            case .reset, .refused: true
            default: false
            }
        }
        #expect(closings.count == 1, "reported once")
    }

    @Test func endlessContinuationFramesEndTheSession() throws {
        let (session, _) = try started()
        let stream = try get(session)
        _ = try session.output()
        var bytes = Peer.frame(Peer.headers, stream: stream, Peer.block([(":status", "200")]))
        for _ in 0..<1000 { bytes += Peer.frame(Peer.continuation, stream: stream, Peer.block([("a", "b")])) }
        #expect(throws: SesameError.self) { _ = try session.receive(bytes) }
    }

    @Test func aSettingsFloodEndsTheSession() throws {
        let (session, _) = try started()
        var flood: [UInt8] = []
        for _ in 0..<5000 { flood += Peer.settingsFrame([(3, 100)]) }
        // Each SETTINGS needs an acknowledgement: a peer that sends them faster than they are sent
        // back is refused rather than queued without bound.
        #expect(throws: SesameError.self) {
            _ = try session.receive(flood)
            _ = try session.output()
        }
    }

    @Test func aResetFailsOneStreamAndNamesItsCode() throws {
        let (session, _) = try started()
        let first = try get(session)
        let second = try get(session)
        _ = try session.output()
        let events = try session.receive(
            Peer.headersFrame(stream: first) + Peer.resetFrame(stream: first, code: 2)
                + Peer.resetFrame(stream: second, code: 0xd) + Peer.settingsFrame()
        )
        #expect(events.contains(.reset(stream: first, errorCode: 2, reason: nil)))
        #expect(events.contains(.reset(stream: second, errorCode: 0xd, reason: nil)), "HTTP_1_1_REQUIRED")
        #expect(try get(session) == 5, "the connection carries new streams")
    }

    /// RFC 9113 section 8.1.1: DATA that does not add up to the content-length is malformed; the
    /// stream is reset, and the reason is reported as soon as the reset goes out, whichever way
    /// the response broke the rule.
    @Test(arguments: [
        (
            announced: 100, sent: 10, method: "GET", status: 200,
            says: "ended after 10 bytes of DATA, but its content-length announced 100"
        ),
        (
            announced: 5, sent: 10, method: "GET", status: 200,
            says: "went past the 5 bytes its content-length announced"
        ),
        (announced: 10, sent: 10, method: "HEAD", status: 200, says: "went past the 0 bytes"),
        (announced: 10, sent: 10, method: "GET", status: 304, says: "a response with no body"),
    ])
    func dataThatDoesNotMatchTheContentLengthResetsTheStreamAndSaysWhy(
        announced: Int,
        sent: Int,
        method: String,
        status: Int,
        says: String
    ) throws {
        let (session, peer) = try started()
        let stream = try session.submitRequest(
            method: method,
            scheme: "https",
            authority: "example.test",
            path: "/",
            fields: HTTPHeaders(),
            hasBody: false
        )
        _ = try session.output()
        let received = try session.receive(
            Peer.headersFrame(stream: stream, status: status, fields: [("content-length", String(announced))])
                + Peer.dataFrame(stream: stream, [UInt8](repeating: 0x78, count: sent), endStream: true)
        )
        #expect(!received.contains(.end(stream: stream)), "a malformed response never completes")
        let (out, events) = try session.outputAndEvents()
        #expect(peer.frames(from: out).contains { $0.type == Peer.rstStream && $0.stream == stream })
        let reasons = events.compactMap { event -> String? in
            if case .refused(stream, let reason) = event { reason } else { nil }
        }
        #expect(reasons.count == 1 && reasons[0].contains(says), "\(events)")
    }

    @Test func aResetThePeerSendsIsReportedAsTheirs() throws {
        let (session, _) = try started()
        let stream = try get(session)
        _ = try session.output()
        let events = try session.receive(
            Peer.headersFrame(stream: stream, fields: [("content-length", "100")])
                + Peer.resetFrame(stream: stream, code: 1)
        )
        #expect(events.contains(.reset(stream: stream, errorCode: 1, reason: nil)), "\(events)")
    }

    @Test func goAwaySaysWhichStreamsWereNotProcessedAndNoNewOneOpens() throws {
        let (session, _) = try started()
        let streams = try (0..<3).map { _ in try get(session) }
        _ = try session.output()
        let events = try session.receive(Peer.goAwayFrame(lastStream: streams[0], code: 0, debug: "restarting"))
        #expect(events.contains(.goAway(lastStreamID: streams[0], errorCode: 0, debug: "restarting")))
        for stream in streams.dropFirst() {
            #expect(events.contains { if case .reset(stream, _, _) = $0 { true } else { false } }, "stream \(stream)")
        }
        #expect(throws: SesameError.self) { _ = try get(session) }
    }

    @Test func aPingIsAnsweredAndTheAnswerReported() throws {
        let (session, peer) = try started()
        session.ping()
        let ping = try #require(peer.frames(from: try session.output()).first { $0.type == Peer.ping })
        #expect(try session.receive(Peer.frame(Peer.ping, flags: Peer.ack, ping.payload)) == [.pingAcknowledged])
    }

    @Test func fieldsHTTP2CannotCarryAreRefused() throws {
        let (session, _) = try started()
        var fields = HTTPHeaders()
        fields.add(name: ":path", value: "/smuggled")
        #expect(throws: SesameError.self) { _ = try get(session, fields: fields) }
    }

    /// However a read cuts the frame headers, a header block is judged as a whole: 30 KB in two
    /// frames arrives, 70 KB resets its stream for its size, never "too many CONTINUATION
    /// frames" (nghttp2 counted one per call that saw part of a frame header). Each frame's
    /// header comes in `piece`-byte reads, its payload in one.
    @Test(arguments: [1, 4])
    func aHeaderBlockWhoseFrameHeadersComeInPiecesIsJudgedWhole(piece: Int) throws {
        for (kilobytes, arrives) in [(30, true), (70, false)] {
            let session = try HTTP2Session()
            _ = try session.output()
            let id = try session.submitRequest(
                method: "GET",
                scheme: "http",
                authority: "a.test",
                path: "/",
                fields: [:],
                hasBody: false
            )
            _ = try session.output()
            var fields = [(":status", "200")]
            for index in 0..<kilobytes { fields.append(("x-field-\(index)", String(repeating: "a", count: 980))) }
            let block = HTTP2TestPeer.block(fields)
            var reads: [[UInt8]] = []
            func add(_ frame: [UInt8]) {
                for start in stride(from: 0, to: 9, by: piece) {
                    reads.append(Array(frame[start..<min(start + piece, 9)]))
                }
                if frame.count > 9 { reads.append(Array(frame[9...])) }
            }
            add(HTTP2TestPeer.settingsFrame())
            var offset = 0
            while offset < block.count {
                let end = min(offset + 16_384, block.count)
                let flags =
                    (end == block.count ? HTTP2TestPeer.endHeaders : 0) | (offset == 0 ? HTTP2TestPeer.endStream : 0)
                add(
                    HTTP2TestPeer.frame(
                        offset == 0 ? HTTP2TestPeer.headers : HTTP2TestPeer.continuation,
                        flags: flags,
                        stream: id,
                        Array(block[offset..<end])
                    )
                )
                offset = end
            }
            var events: [HTTP2Session.Event] = []
            for read in reads {
                events += try session.receive(read)
                events += try session.outputAndEvents().events
            }
            let answered = events.contains { if case .head(id, 200, _) = $0 { true } else { false } }
            let reset = events.contains {
                if case .refused(id, let reason) = $0 { reason.contains("header block") } else { false }
            }
            #expect(answered == arrives && reset == !arrives, "\(kilobytes) KB in \(piece)-byte reads")
        }
    }
}
