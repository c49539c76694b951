internal import CNGHTTP2

/// A client HTTP/2 session over byte buffers (RFC 9113, through nghttp2), with no I/O: frames
/// come in through ``receive(_:)`` and go out through ``drainOutput(into:)``, as a ``TLSEngine``
/// does for records. Whoever owns it (a connection, on its loop) moves the bytes and hands the
/// ``Event``s to the streams they belong to.
///
/// Memory stays bounded whatever the peer does: a header block over ``Limits/maxHeaderListSize``
/// resets its stream; received data is acknowledged (`WINDOW_UPDATE`) only as the owner reports
/// it consumed (``consumed(_:on:)``), so a slow reader holds at most a stream window per stream;
/// a request body is buffered only as far as the owner chooses before it waits for
/// ``bufferedBody(on:)`` to drain; and nghttp2 fails the session (`ENHANCE_YOUR_CALM`) when the
/// peer floods it with frames it must acknowledge.
///
/// Not thread-safe: its owner calls it from one thread at a time. nghttp2's callbacks find the
/// session through their user data (``HTTP2Callbacks``); they run only inside the calls made here.
final class HTTP2Session {
    struct Limits: Equatable, Sendable {
        /// The most header bytes (names and values, per RFC 9113 section 6.5.2's accounting) one
        /// header block may carry; advertised as `SETTINGS_MAX_HEADER_LIST_SIZE` and enforced.
        var maxHeaderListSize = 65_536
        /// `SETTINGS_INITIAL_WINDOW_SIZE`: the most a stream's peer may send before the owner
        /// consumed what came.
        var streamWindow = 1 << 20
        /// The connection's window, shared by its streams.
        var connectionWindow = 4 << 20
    }

    /// What arrived, for the stream (or the connection) it names.
    enum Event: Equatable {
        /// The peer's SETTINGS: how many streams it lets this side open at once.
        case settings(maxConcurrentStreams: Int)
        /// A response head (final, 200…599), or an informational one (100…199).
        case head(stream: Int32, status: Int, fields: HTTPHeaders)
        case data(stream: Int32, [UInt8])
        case trailers(stream: Int32, HTTPHeaders)
        /// The peer ended the stream: the response is complete.
        case end(stream: Int32)
        /// The stream closed with an error code: the peer's RST_STREAM, or the connection's end
        /// (GOAWAY) closing it.
        case reset(stream: Int32, errorCode: UInt32, reason: String?)
        /// This side reset the stream because of what the peer sent on it (a response that
        /// breaks HTTP/2's message rules, a header block over the limit); `reason` says what.
        case refused(stream: Int32, reason: String)
        /// The peer is going away: streams above `lastStreamID` were not processed (safe to retry).
        case goAway(lastStreamID: Int32, errorCode: UInt32, debug: String)
        case pingAcknowledged
    }

    let limits: Limits
    let session: OpaquePointer
    /// Holds back a frame header a read cut short (see its type).
    var aligner = HTTP2FrameHeaderAligner()
    /// Events gathered by the callbacks during one ``receive(_:)``.
    var events: [Event] = []
    /// Header blocks being received, by stream, with their byte count so far.
    var incomingHeaders: [Int32: (fields: HTTPHeaders, bytes: Int)] = [:]
    /// Streams reset here whose reset was already reported (a header block over the limit).
    var reportedResets: Set<Int32> = []
    /// Streams that have a final response head.
    var answeredStreams: Set<Int32> = []
    /// Per open stream: the body length its response announced (nil: not announced), the DATA
    /// frames' lengths and what of them arrived, to say why this side reset a stream whose DATA
    /// did not match (RFC 9113 section 8.1.1).
    var bodyLengths: [Int32: BodyLength] = [:]

    struct BodyLength {
        var announced: Int?
        /// Payload lengths of the DATA frames begun (padding included).
        var offered = 0
        var received = 0
    }
    /// Requests whose responses carry no body whatever their fields say (HEAD).
    var bodilessRequests: Set<Int32> = []
    /// Streams the peer reset (RST_STREAM): their closing is the peer's doing, not this side's.
    var peerResets: Set<Int32> = []
    /// What nghttp2 last found wrong in the peer's frames.
    var lastProblem: String?
    /// The peer said GOAWAY.
    var peerWentAway = false
    /// This side said GOAWAY (``goAway()``).
    var wentAway = false
    /// Request bodies waiting for flow control to let them go, by stream.
    var outgoing: [Int32: OutgoingBody] = [:]

    struct OutgoingBody {
        var bytes: [UInt8] = []
        var offset = 0
        var ended = false
        var waiting: Int { bytes.count - offset }
    }

    init(limits: Limits = Limits()) throws(SesameError) {
        self.limits = limits
        var callbacks: OpaquePointer?
        var options: OpaquePointer?
        guard nghttp2_session_callbacks_new(&callbacks) == 0, let callbacks,
            nghttp2_option_new(&options) == 0, let options
        else { throw SesameError(.internalError, "cannot create an HTTP/2 session") }
        defer {
            nghttp2_session_callbacks_del(callbacks)
            nghttp2_option_del(options)
        }
        HTTP2Callbacks.install(on: callbacks)
        nghttp2_option_set_no_auto_window_update(options, 1)  // windows follow what was consumed
        nghttp2_option_set_no_http_messaging(options, 0)  // nghttp2 checks pseudo-headers and lengths
        nghttp2_option_set_max_continuations(options, 8)  // CONTINUATION frames per header block
        nghttp2_option_set_max_outbound_ack(options, 1000)  // SETTINGS and PING answers queued
        var session: OpaquePointer?
        // No callback runs before the first receive or send: the user data is set once `self` is whole.
        guard nghttp2_session_client_new2(&session, callbacks, nil, options) == 0, let session else {
            throw SesameError(.internalError, "cannot create an HTTP/2 session")
        }
        self.session = session
        nghttp2_session_set_user_data(session, Unmanaged.passUnretained(self).toOpaque())
        var settings = [
            nghttp2_settings_entry(settings_id: Int32(NGHTTP2_SETTINGS_ENABLE_PUSH.rawValue), value: 0),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE.rawValue),
                value: UInt32(limits.streamWindow)
            ),
            nghttp2_settings_entry(
                settings_id: Int32(NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE.rawValue),
                value: UInt32(limits.maxHeaderListSize)
            ),
        ]
        guard nghttp2_submit_settings(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), &settings, settings.count) == 0,
            nghttp2_session_set_local_window_size(
                session,
                UInt8(NGHTTP2_FLAG_NONE.rawValue),
                0,
                Int32(limits.connectionWindow)
            ) == 0
        else {
            nghttp2_session_del(session)
            throw SesameError(.internalError, "cannot start the HTTP/2 session")
        }
    }

    deinit { nghttp2_session_del(session) }

    // MARK: Frames in and out

    /// Processes frames from the peer; returns what they said.
    /// - Throws: ``SesameError/Code/protocolError`` when the peer broke the protocol (the
    ///   session then queued a GOAWAY for it and carries nothing more).
    func receive(_ bytes: UnsafeRawBufferPointer) throws(SesameError) -> [Event] {
        defer { events.removeAll(keepingCapacity: true) }
        guard !bytes.isEmpty else { return events }
        let (taken, header) = aligner.completeHeld(from: bytes)
        if let header {
            let fed = header.withUnsafeBytes { raw in Result { () throws(SesameError) in try feed(raw) } }
            try fed.get()
        }
        let rest = UnsafeRawBufferPointer(rebasing: bytes[taken...])
        let whole = aligner.wholePrefix(of: rest)
        try feed(UnsafeRawBufferPointer(rebasing: rest[0..<whole]))
        // A connection error nghttp2 found queues a GOAWAY and takes nothing more: that is this
        // session's end, whatever events came before it.
        if nghttp2_session_want_read(session) == 0, !peerWentAway, !wentAway {
            let reason = lastProblem ?? "nghttp2 ended the session (a header block it could not decode, or a flood)"
            throw SesameError(.protocolError, "HTTP/2: the server broke the protocol: \(reason)")
        }
        return events
    }

    private func feed(_ bytes: UnsafeRawBufferPointer) throws(SesameError) {
        guard !bytes.isEmpty else { return }
        let processed = nghttp2_session_mem_recv(
            session,
            bytes.baseAddress?.assumingMemoryBound(to: UInt8.self),
            bytes.count
        )
        if processed < 0 {
            let reason = lastProblem ?? String(cString: nghttp2_strerror(Int32(processed)))
            throw SesameError(.protocolError, "HTTP/2: the server broke the protocol: \(reason)")
        }
    }

    /// Processes frames from the peer, as a read returned them.
    func receive(_ bytes: [UInt8]) throws(SesameError) -> [Event] {
        let result = bytes.withUnsafeBytes { raw in Result { () throws(SesameError) in try receive(raw) } }
        return try result.get()
    }

    /// Moves the frames waiting to be sent to the end of `buffer`. Returns the events sending
    /// them caused: a stream this side reset (a protocol error in its frames) closes once its
    /// RST_STREAM is out.
    /// - Throws: ``SesameError/Code/protocolError`` when the session failed, or ended itself for
    ///   what the peer sent (the GOAWAY saying why is in `buffer` then).
    @discardableResult
    func drainOutput(into buffer: inout [UInt8]) throws(SesameError) -> [Event] {
        defer { events.removeAll(keepingCapacity: true) }
        while true {
            var data: UnsafePointer<UInt8>?
            let count = nghttp2_session_mem_send(session, &data)
            if count < 0 {
                throw SesameError(.protocolError, "HTTP/2: \(String(cString: nghttp2_strerror(Int32(count))))")
            }
            guard count > 0, let data else { break }
            buffer.append(contentsOf: UnsafeBufferPointer(start: data, count: count))
        }
        // A GOAWAY for a protocol error nghttp2 found ends the session once it is sent.
        if nghttp2_session_want_read(session) == 0, !peerWentAway, !wentAway, let lastProblem {
            throw SesameError(.protocolError, "HTTP/2: the server broke the protocol: \(lastProblem)")
        }
        return events
    }

    /// True when frames wait to be sent (a request's body held back for its window does not count).
    var wantsWrite: Bool { nghttp2_session_want_write(session) != 0 }

    /// The name RFC 9113 section 7 gives an error code, such as "REFUSED_STREAM".
    static func errorName(_ code: UInt32) -> String {
        String(cString: nghttp2_http2_strerror(code))
    }

    /// True while the session has frames to send or expects frames (false once both sides are done).
    var isAlive: Bool { nghttp2_session_want_read(session) != 0 || nghttp2_session_want_write(session) != 0 }

    /// How many streams the peer lets this side open at once (unbounded until its SETTINGS say).
    var peerMaxConcurrentStreams: Int {
        Int(nghttp2_session_get_remote_settings(session, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS))
    }
}
