internal import CNGHTTP2

// Requests out, and the frames that concern streams.
extension HTTP2Session {
    /// Opens a stream for a request: `method`, `scheme`, `authority` and `path` become the
    /// pseudo-header fields, `fields` the rest (connection-specific fields, which HTTP/2 forbids,
    /// are left out). With `hasBody`, the body follows through ``sendBody(_:on:end:)``.
    /// - Returns: the stream's identifier.
    /// - Throws: ``SesameError/Code/invalidArgument`` for a field HTTP/2 cannot carry, or
    ///   ``SesameError/Code/connectionClosed`` when no stream can be opened (GOAWAY, or identifiers
    ///   used up).
    func submitRequest(
        method: String,
        scheme: String,
        authority: String,
        path: String,
        fields: HTTPHeaders,
        hasBody: Bool
    ) throws(SesameError) -> Int32 {
        guard nghttp2_session_check_request_allowed(session) != 0 else {
            throw SesameError(.connectionClosed, "HTTP/2: the connection takes no new request (GOAWAY)")
        }
        var pairs: [(String, String)] = [(":method", method), (":scheme", scheme), (":authority", authority)]
        if method != "CONNECT" { pairs.append((":path", path)) }
        for field in fields {
            let name = field.name.lowercased()
            if Self.connectionSpecific.contains(name) { continue }
            if name == "te", field.value.lowercased() != "trailers" { continue }
            guard !name.isEmpty, !name.hasPrefix(":") else {
                throw SesameError(.invalidArgument, "'\(field.name)' cannot be sent as an HTTP/2 field")
            }
            pairs.append((name, field.value))
        }
        let stream = withFieldArray(pairs) { fields -> Int32 in
            guard hasBody else {
                return nghttp2_submit_request(session, nil, fields.baseAddress, fields.count, nil, nil)
            }
            var provider = nghttp2_data_provider(
                source: nghttp2_data_source(ptr: nil),
                read_callback: HTTP2Callbacks.readBody
            )
            return nghttp2_submit_request(session, nil, fields.baseAddress, fields.count, &provider, nil)
        }
        guard stream > 0 else {
            let text = String(cString: nghttp2_strerror(stream))
            if stream == NGHTTP2_ERR_STREAM_ID_NOT_AVAILABLE.rawValue || stream == NGHTTP2_ERR_INVALID_STATE.rawValue {
                throw SesameError(.connectionClosed, "HTTP/2: no new stream can be opened (\(text))")
            }
            throw SesameError(.invalidArgument, "HTTP/2: the request cannot be sent (\(text))")
        }
        if hasBody { outgoing[stream] = OutgoingBody() }
        if method == "HEAD" { bodilessRequests.insert(stream) }
        return stream
    }

    /// Fields that belong to one HTTP/1.1 connection and must not appear in HTTP/2 (RFC 9113
    /// section 8.2.2); `host` becomes `:authority`.
    static let connectionSpecific: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "host",
    ]

    /// Adds `bytes` to a stream's request body (`end`: the last of it). They go out as flow
    /// control allows; ``bufferedBody(on:)`` tells how many still wait, so that the owner can
    /// wait before giving more.
    func sendBody(_ bytes: [UInt8], on stream: Int32, end: Bool) {
        guard var body = outgoing[stream], !body.ended else { return }
        if body.offset == body.bytes.count {
            body.bytes.removeAll(keepingCapacity: true)
            body.offset = 0
        }
        body.bytes += bytes
        body.ended = end
        outgoing[stream] = body
        _ = nghttp2_session_resume_data(session, stream)
    }

    /// Request-body bytes given and not yet sent (waiting for the peer's window).
    func bufferedBody(on stream: Int32) -> Int { outgoing[stream]?.waiting ?? 0 }

    /// The owner consumed `count` bytes of a stream's data: the peer may send that much more.
    func consumed(_ count: Int, on stream: Int32) {
        guard count > 0 else { return }
        _ = nghttp2_session_consume(session, stream, count)
    }

    /// Ends one stream (the task was cancelled): RST_STREAM with CANCEL.
    func cancel(_ stream: Int32) {
        _ = nghttp2_submit_rst_stream(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), stream, NGHTTP2_CANCEL.rawValue)
    }

    /// Sends a PING, to learn whether an idle connection is still alive.
    func ping() {
        _ = nghttp2_submit_ping(session, UInt8(NGHTTP2_FLAG_NONE.rawValue), nil)
    }

    /// Says GOAWAY (NO_ERROR): no new stream, the open ones finish.
    func goAway() {
        wentAway = true
        _ = nghttp2_session_terminate_session(session, NGHTTP2_NO_ERROR.rawValue)
    }

    // MARK: From the callbacks

    func frameReceived(_ frame: nghttp2_frame) {
        let stream = frame.hd.stream_id
        let endsStream = frame.hd.flags & UInt8(NGHTTP2_FLAG_END_STREAM.rawValue) != 0
        switch UInt32(frame.hd.type) {
        case NGHTTP2_HEADERS.rawValue:
            guard let block = incomingHeaders.removeValue(forKey: stream) else { break }
            if answeredStreams.contains(stream) {
                events.append(.trailers(stream: stream, block.fields))
            } else {
                let status = block.fields.first(":status").flatMap { Int($0) } ?? 0
                var fields = HTTPHeaders()
                for field in block.fields where !field.name.hasPrefix(":") {
                    fields.add(name: field.name, value: field.value)
                }
                if status >= 200 {
                    answeredStreams.insert(stream)
                    // RFC 9110 sections 6.4.1 and 8.6: no body after HEAD, 204 or 304.
                    let bodiless = bodilessRequests.contains(stream) || status == 204 || status == 304
                    bodyLengths[stream] = BodyLength(
                        announced: bodiless ? 0 : fields.first("content-length").flatMap { Int($0) }
                    )
                }
                events.append(.head(stream: stream, status: status, fields: fields))
            }
            if endsStream { events.append(.end(stream: stream)) }
        case NGHTTP2_DATA.rawValue:
            if endsStream { events.append(.end(stream: stream)) }
        case NGHTTP2_SETTINGS.rawValue:
            guard frame.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) == 0 else { break }
            events.append(.settings(maxConcurrentStreams: peerMaxConcurrentStreams))
        case NGHTTP2_RST_STREAM.rawValue:
            peerResets.insert(stream)
        case NGHTTP2_GOAWAY.rawValue:
            let goaway = frame.goaway
            peerWentAway = true
            let debug =
                goaway.opaque_data.map {
                    String(
                        decoding: UnsafeBufferPointer(start: $0, count: min(goaway.opaque_data_len, 256)),
                        as: UTF8.self
                    )
                } ?? ""
            events.append(.goAway(lastStreamID: goaway.last_stream_id, errorCode: goaway.error_code, debug: debug))
        case NGHTTP2_PING.rawValue:
            if frame.hd.flags & UInt8(NGHTTP2_FLAG_ACK.rawValue) != 0 { events.append(.pingAcknowledged) }
        default:
            break
        }
    }

    func streamClosed(_ stream: Int32, errorCode: UInt32) {
        outgoing[stream] = nil
        incomingHeaders[stream] = nil
        answeredStreams.remove(stream)
        bodilessRequests.remove(stream)
        let lengths = bodyLengths.removeValue(forKey: stream)
        let byPeer = peerResets.remove(stream) != nil
        if reportedResets.remove(stream) != nil { return }
        if errorCode == NGHTTP2_PROTOCOL_ERROR.rawValue, !byPeer {
            // nghttp2 reset the stream for what the peer sent on it (it checks RFC 9113 section
            // 8's message rules); the RST_STREAM has just gone out.
            events.append(.refused(stream: stream, reason: Self.violation(lengths)))
        } else if errorCode != NGHTTP2_NO_ERROR.rawValue {
            events.append(.reset(stream: stream, errorCode: errorCode, reason: nil))
        }
    }

    /// What a response nghttp2 refused broke, when its body length says.
    private static func violation(_ lengths: BodyLength?) -> String {
        guard let lengths, let announced = lengths.announced, lengths.offered != announced else {
            return "the server's frames broke HTTP/2's message rules (RFC 9113 section 8)"
        }
        if lengths.offered > announced {
            return "the response's DATA went past the \(announced) bytes its content-length announced"
                + (announced == 0 ? " (a response with no body)" : "")
        }
        return
            "the response ended after \(lengths.received) bytes of DATA, but its content-length announced \(announced)"
    }

    func readBody(
        _ stream: Int32,
        into buffer: UnsafeMutableRawBufferPointer,
        flags: UnsafeMutablePointer<UInt32>
    ) -> Int {
        guard var body = outgoing[stream] else {
            return Int(NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue)
        }
        let count = min(buffer.count, body.waiting)
        if count > 0 {
            body.bytes.withUnsafeBytes {
                buffer.copyMemory(from: UnsafeRawBufferPointer(rebasing: $0[body.offset..<(body.offset + count)]))
            }
            body.offset += count
        }
        if body.waiting == 0, body.ended {
            flags.pointee |= NGHTTP2_DATA_FLAG_EOF.rawValue
        } else if count == 0 {
            outgoing[stream] = body
            return Int(NGHTTP2_ERR_DEFERRED.rawValue)
        }
        outgoing[stream] = body
        return count
    }
}

/// Calls `body` with `pairs` as nghttp2 name-value pairs, all pointing into one buffer that
/// lives for the call (nghttp2 copies them).
private func withFieldArray<Result>(
    _ pairs: [(String, String)],
    _ body: (UnsafeMutableBufferPointer<nghttp2_nv>) -> Result
) -> Result {
    var bytes: [UInt8] = []
    var spans: [(name: Range<Int>, value: Range<Int>)] = []
    for (name, value) in pairs {
        let nameStart = bytes.count
        bytes.append(contentsOf: name.utf8)
        let valueStart = bytes.count
        bytes.append(contentsOf: value.utf8)
        spans.append((nameStart..<valueStart, valueStart..<bytes.count))
    }
    bytes.append(0)  // never empty, so the base address exists
    return bytes.withUnsafeMutableBufferPointer { storage in
        // safe: `bytes` holds at least the terminating byte.
        let base = storage.baseAddress!
        var fields = spans.map { span in
            nghttp2_nv(
                name: base + span.name.lowerBound,
                value: base + span.value.lowerBound,
                namelen: span.name.count,
                valuelen: span.value.count,
                flags: UInt8(NGHTTP2_NV_FLAG_NONE.rawValue)
            )
        }
        return fields.withUnsafeMutableBufferPointer { body($0) }
    }
}
