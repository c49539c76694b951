import FoundationEssentials
import Glibc

/// An HTTP/2 server on loopback (h2c, prior knowledge) that misbehaves as it is told, one
/// behaviour per connection: it goes away, refuses streams, asks for HTTP/1.1, resets a stream
/// after its head, floods SETTINGS, sends a header block too large or one that never ends, or
/// never opens its window. A connection that does not start with the HTTP/2 preface is answered
/// in HTTP/1.1 ("http/1.1 answer"), so that a client falling back to HTTP/1.1 can be seen.
///
/// Blocking sockets, one thread per connection; ``stop()`` (or deinit) closes everything.
public final class HostileHTTP2Server: @unchecked Sendable {
    // @unchecked: the mutable state is behind `lock`.
    /// What the server does on one connection.
    public enum Behavior: Sendable {
        /// A well-behaved answer: 200 with `body` to every request.
        case answer(String)
        /// Waits briefly for more requests after the first, answers the first, then GOAWAY
        /// (NO_ERROR) naming the first as the last processed; the others get nothing.
        case goAwayAfterFirstStream
        /// RST_STREAM REFUSED_STREAM to every request.
        case refuseStreams
        /// RST_STREAM HTTP_1_1_REQUIRED to every request.
        case requireHTTP1
        /// The first request gets its head and a little body, then RST_STREAM INTERNAL_ERROR;
        /// later ones on the connection are answered.
        case resetFirstAfterHeaders
        /// HEADERS without END_HEADERS, then CONTINUATION frames until the client leaves.
        case endlessContinuation
        /// A stream window of 0 (SETTINGS_INITIAL_WINDOW_SIZE) that no WINDOW_UPDATE ever opens;
        /// requests without a body are answered.
        case windowNeverOpens
        /// A response head of `bytes` bytes, in fields of 1000 bytes each.
        case hugeHeaderBlock(bytes: Int)
        /// A response head with one field of `bytes` bytes.
        case hugeHeaderField(bytes: Int)
        /// `count` SETTINGS frames at once, reading nothing in between.
        case settingsFlood(count: Int)
        /// Answers the first request, then reads on and answers nothing at all (not even PING),
        /// as a peer behind a NAT that dropped the connection.
        case answerFirstThenSilent
        /// To a request with a body: `100` at once when `continues`, then "got N" once the N
        /// bytes of the body came; otherwise `status` at once, before any of the body, and the
        /// body is only counted (``bodyBytesReceived``).
        case expectation(continues: Bool, status: Int = 417)
        /// Every request gets a head whose `content-length` says `declared` and a body of `sent`
        /// bytes that ends the stream: a response that breaks RFC 9113 section 8.1.1, which the
        /// client must refuse by resetting the stream.
        case contentLengthMismatch(declared: Int, sent: Int)
    }

    /// The loopback port the server listens on.
    public let port: Int
    private let listener: Int32
    private let behavior: @Sendable (Int) -> Behavior
    private let lock = ThreadLock()
    private var connections: [Int32] = []
    private var accepted = 0
    private var http1Answers = 0
    private var bodyBytes = 0
    private var requestHeads = 0
    private var stopped = false

    /// - Parameter behavior: what the server does on its n-th connection (from 0).
    public init(_ behavior: @escaping @Sendable (Int) -> Behavior) throws {
        self.behavior = behavior
        let (fd, address) = try LoopbackListener.open(backlog: 64)
        listener = fd
        port = Int(UInt16(bigEndian: address.sin_port))
        ServerThread.start { [self] in acceptLoop() }
    }

    deinit { stop() }

    /// How many connections were accepted.
    public var connectionCount: Int { lock.withLock { accepted } }
    /// How many HTTP/1.1 requests were answered.
    public var http1AnswerCount: Int { lock.withLock { http1Answers } }
    /// How many bytes of request bodies (DATA payloads) arrived, over every connection.
    public var bodyBytesReceived: Int { lock.withLock { bodyBytes } }
    /// How many HEADERS frames the clients sent (a request's head, or its trailers), over every
    /// connection, answered or not.
    public var requestHeadsReceived: Int { lock.withLock { requestHeads } }

    /// Stops accepting and ends every connection. Only shut down here: each descriptor is closed
    /// by the thread that uses it, once it is done with it. Closed here, its number could go at
    /// once to another socket of the process (a client connection of another test), which the
    /// server's thread, still reading, would then read from.
    public func stop() {
        lock.withLock {
            guard !stopped else { return }
            stopped = true
            for fd in connections { shutdown(fd, Int32(SHUT_RDWR)) }
            shutdown(listener, Int32(SHUT_RDWR))  // wakes the accept(2) below
        }
    }

    private func acceptLoop() {
        while true {
            let fd = accept(listener, nil, nil)
            guard fd >= 0 else {
                if errno == EINTR { continue }
                Glibc.close(listener)
                return
            }
            let index = lock.withLock { () -> Int? in
                guard !stopped else { return nil }
                connections.append(fd)
                accepted += 1
                return accepted - 1
            }
            guard let index else {
                Glibc.close(fd)
                Glibc.close(listener)
                return
            }
            let behavior = behavior(index)
            ServerThread.start { [self] in serve(fd, behavior) }
        }
    }

    private func serve(_ fd: Int32, _ behavior: Behavior) {
        defer {
            // Out of the set under the lock first, so that `stop()` never shuts down a number that
            // is no longer this server's.
            lock.withLock { connections.removeAll { $0 == fd } }
            Glibc.close(fd)
        }
        var peer = Peer(fd: fd)
        guard let start = peer.read(atLeast: HTTP2Frames.preface.count) else { return }
        guard Array(start.prefix(HTTP2Frames.preface.count)) == HTTP2Frames.preface else {
            answerHTTP1(&peer, start)
            return
        }
        peer.pending = Array(start.dropFirst(HTTP2Frames.preface.count))
        var script = HTTP2Script(peer: peer, behavior: behavior) { [self] observation in
            lock.withLock {
                switch observation {
                case .bodyBytes(let count): bodyBytes += count
                case .requestHead: requestHeads += 1
                }
            }
        }
        script.run()
    }

    private func answerHTTP1(_ peer: inout Peer, _ start: [UInt8]) {
        var head = start
        while !head.containsHeadEnd {
            guard let more = peer.read(atLeast: 1) else { return }
            head += more
        }
        lock.withLock { http1Answers += 1 }
        let body = "http/1.1 answer"
        peer.write(
            Array("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8)
        )
    }
}

/// One accepted connection, read and written with blocking calls.
struct Peer {
    let fd: Int32
    var pending: [UInt8] = []

    /// At least `count` bytes more (what was pending first), or nil at the end of the stream.
    mutating func read(atLeast count: Int) -> [UInt8]? {
        var out = pending
        pending.removeAll()
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while out.count < count {
            let got = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if got < 0, errno == EINTR { continue }
            guard got > 0 else { return nil }
            out += buffer[0..<got]
        }
        return out
    }

    /// False once the peer is gone.
    @discardableResult
    func write(_ bytes: [UInt8]) -> Bool {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes.withUnsafeBytes {
                send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL))
            }  // safe: non-empty
            if sent < 0, errno == EINTR { continue }
            guard sent > 0 else { return false }
            offset += sent
        }
        return true
    }

    /// Whether bytes are waiting within `milliseconds`.
    func readable(within milliseconds: Int32) -> Bool {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&poller, 1, milliseconds) > 0
    }
}

extension [UInt8] {
    fileprivate var containsHeadEnd: Bool {
        count >= 4
            && indices.dropLast(3).contains {
                self[$0] == 13 && self[$0 + 1] == 10 && self[$0 + 2] == 13 && self[$0 + 3] == 10
            }
    }
}

/// What a ``HostileHTTP2Server`` connection says, frame by frame, after the client's preface.
struct HTTP2Script {
    var peer: Peer
    let behavior: HostileHTTP2Server.Behavior
    private var incoming: [UInt8] = []
    private var goneAway = false
    private var resetOne = false
    private var silent = false
    private var received: [Int32: Int] = [:]
    private let observe: (Observation) -> Void

    /// What the script tells its server about the client's frames.
    enum Observation {
        case bodyBytes(Int)
        case requestHead
    }

    init(peer: Peer, behavior: HostileHTTP2Server.Behavior, observe: @escaping (Observation) -> Void) {
        self.peer = peer
        self.behavior = behavior
        self.observe = observe
        incoming = peer.pending
        self.peer.pending = []
    }

    mutating func run() {
        var settings: [(UInt16, UInt32)] = [(0x3, 100)]  // SETTINGS_MAX_CONCURRENT_STREAMS
        if case .windowNeverOpens = behavior { settings.append((0x4, 0)) }  // SETTINGS_INITIAL_WINDOW_SIZE
        guard peer.write(HTTP2Frames.settingsFrame(settings)) else { return }
        if case .settingsFlood(let count) = behavior {
            let one = HTTP2Frames.settingsFrame([(0x3, 100)])
            var flood: [UInt8] = []
            flood.reserveCapacity(one.count * count)
            for _ in 0..<count { flood += one }
            peer.write(flood)
        }
        while true {
            for frame in HTTP2Frames.takeFrames(from: &incoming) {
                guard handle(frame) else { return }
            }
            guard let more = peer.read(atLeast: 1) else { return }
            incoming += more
        }
    }

    /// Answers one frame of the client's; false when the connection is done with.
    private mutating func handle(_ frame: HTTP2Frames.Frame) -> Bool {
        if frame.type == HTTP2Frames.headers { observe(.requestHead) }
        if silent { return true }
        switch frame.type {
        case HTTP2Frames.settings where frame.flags & HTTP2Frames.ack == 0:
            return peer.write(HTTP2Frames.frame(HTTP2Frames.settings, flags: HTTP2Frames.ack))
        case HTTP2Frames.ping where frame.flags & HTTP2Frames.ack == 0:
            return peer.write(HTTP2Frames.frame(HTTP2Frames.ping, flags: HTTP2Frames.ack, frame.payload))
        case HTTP2Frames.goAway:
            return false
        case HTTP2Frames.data:
            if case .windowNeverOpens = behavior { return true }
            let count = UInt32(frame.payload.count)
            received[frame.stream, default: 0] += frame.payload.count
            observe(.bodyBytes(frame.payload.count))
            if count > 0 {
                peer.write(
                    HTTP2Frames.windowUpdateFrame(stream: 0, increment: count)
                        + HTTP2Frames.windowUpdateFrame(stream: frame.stream, increment: count)
                )
            }
            if frame.flags & HTTP2Frames.endStream != 0, case .answer(let body) = behavior {
                return answer(frame.stream, body)
            }
            if frame.flags & HTTP2Frames.endStream != 0, case .expectation(true, _) = behavior {
                return answer(frame.stream, "got \(received[frame.stream, default: 0])")
            }
            return true
        case HTTP2Frames.headers:
            return request(frame.stream, complete: frame.flags & HTTP2Frames.endStream != 0)
        default:
            return true
        }
    }

    /// A request's HEADERS arrived on `stream` (`complete`: it has no body).
    private mutating func request(_ stream: Int32, complete: Bool) -> Bool {
        switch behavior {
        case .answer(let body):
            return complete ? answer(stream, body) : true
        case .goAwayAfterFirstStream:
            guard !goneAway else { return true }
            goneAway = true
            usleep(150_000)  // the client's other requests arrive meanwhile, and go unprocessed
            return answer(stream, "first") && peer.write(HTTP2Frames.goAwayFrame(lastStream: stream, code: 0))
        case .refuseStreams:
            return peer.write(HTTP2Frames.resetFrame(stream: stream, code: 0x7))
        case .requireHTTP1:
            return peer.write(HTTP2Frames.resetFrame(stream: stream, code: 0xd))
        case .resetFirstAfterHeaders:
            guard !resetOne else { return answer(stream, "after the reset") }
            resetOne = true
            return peer.write(
                HTTP2Frames.headersFrame(stream: stream, fields: [("content-length", "100")])
                    + HTTP2Frames.dataFrame(stream: stream, Array("partial".utf8))
                    + HTTP2Frames.resetFrame(stream: stream, code: 0x2)
            )
        case .endlessContinuation:
            guard
                peer.write(
                    HTTP2Frames.frame(HTTP2Frames.headers, stream: stream, HTTP2Frames.block([(":status", "200")]))
                )
            else { return false }
            let more = HTTP2Frames.frame(
                HTTP2Frames.continuation,
                stream: stream,
                HTTP2Frames.block([("x-more", String(repeating: "a", count: 1000))])
            )
            for _ in 0..<100_000 where !peer.write(more) { return false }
            return false
        case .windowNeverOpens:
            return complete ? answer(stream, "ok") : true
        case .hugeHeaderBlock, .hugeHeaderField:
            var fields = [(":status", "200")]
            if case .hugeHeaderField(let bytes) = behavior {
                fields.append(("x-huge", String(repeating: "a", count: bytes)))
            } else if case .hugeHeaderBlock(let bytes) = behavior {
                for index in 0..<(bytes / 1000) {
                    fields.append(("x-field-\(index)", String(repeating: "a", count: 980)))
                }
            }
            let block = HTTP2Frames.block(fields)
            var frames: [UInt8] = []
            var offset = 0
            while offset < block.count {
                let end = min(offset + 16_384, block.count)
                let last = end == block.count
                frames += HTTP2Frames.frame(
                    offset == 0 ? HTTP2Frames.headers : HTTP2Frames.continuation,
                    flags: (last ? HTTP2Frames.endHeaders : 0) | (offset == 0 ? HTTP2Frames.endStream : 0),
                    stream: stream,
                    Array(block[offset..<end])
                )
                offset = end
            }
            return peer.write(frames)
        case .settingsFlood:
            return complete ? answer(stream, "flooded") : true
        case .answerFirstThenSilent:
            silent = true
            return answer(stream, "the only answer")
        case .contentLengthMismatch(let declared, let sent):
            return peer.write(
                HTTP2Frames.headersFrame(stream: stream, fields: [("content-length", String(declared))])
                    + HTTP2Frames.dataFrame(
                        stream: stream,
                        Array(repeating: UInt8(ascii: "x"), count: sent),
                        endStream: true
                    )
            )
        case .expectation(let continues, let status):
            if complete { return answer(stream, "no body") }
            if continues { return peer.write(HTTP2Frames.headersFrame(stream: stream, status: 100)) }
            return peer.write(
                HTTP2Frames.headersFrame(
                    stream: stream,
                    status: status,
                    fields: [("content-length", "0")],
                    endStream: true
                )
            )
        }
    }

    private func answer(_ stream: Int32, _ body: String) -> Bool {
        peer.write(
            HTTP2Frames.headersFrame(stream: stream, fields: [("content-length", String(body.utf8.count))])
                + HTTP2Frames.dataFrame(stream: stream, Array(body.utf8), endStream: true)
        )
    }
}
