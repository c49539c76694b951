internal import CNGHTTP2

/// Captureless C trampolines for nghttp2: each finds its ``HTTP2Session`` through the user data
/// and records what arrived as an ``HTTP2Session/Event``. They never call back into nghttp2 for
/// the same session, apart from reading what a frame carries.
enum HTTP2Callbacks {
    static func install(on callbacks: OpaquePointer) {
        nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, beginHeaders)
        nghttp2_session_callbacks_set_on_begin_frame_callback(callbacks, beginFrame)
        nghttp2_session_callbacks_set_on_header_callback(callbacks, header)
        nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, frameReceived)
        nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, dataChunk)
        nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, streamClosed)
        nghttp2_session_callbacks_set_error_callback2(callbacks, error)
        nghttp2_session_callbacks_set_on_frame_send_callback(callbacks, frameSent)
    }

    /// A GOAWAY this side sends with an error code is the reason the session ended, when
    /// nghttp2 said nothing else (a header block its HPACK decoder refused, for one).
    static let frameSent: nghttp2_on_frame_send_callback = { _, frame, userData in
        guard let session = session(userData), let frame, frame.pointee.hd.type == UInt8(NGHTTP2_GOAWAY.rawValue)
        else { return 0 }
        let code = frame.pointee.goaway.error_code
        if code != NGHTTP2_NO_ERROR.rawValue, session.lastProblem == nil {
            session.lastProblem = "Sesame ended the connection with GOAWAY \(HTTP2Session.errorName(code))"
        }
        return 0
    }

    static func session(_ userData: UnsafeMutableRawPointer?) -> HTTP2Session? {
        userData.map { Unmanaged<HTTP2Session>.fromOpaque($0).takeUnretainedValue() }
    }

    /// A DATA frame's length counts toward its stream's body before nghttp2 checks it (a frame
    /// past the content-length never reaches ``dataChunk``).
    static let beginFrame: nghttp2_on_begin_frame_callback = { _, header, userData in
        guard let session = session(userData), let header, header.pointee.type == UInt8(NGHTTP2_DATA.rawValue) else {
            return 0
        }
        session.bodyLengths[header.pointee.stream_id]?.offered += header.pointee.length
        return 0
    }

    static let beginHeaders: nghttp2_on_begin_headers_callback = { _, frame, userData in
        guard let session = session(userData), let frame else { return 0 }
        session.incomingHeaders[frame.pointee.hd.stream_id] = (HTTPHeaders(), 0)
        return 0
    }

    static let header: nghttp2_on_header_callback = { _, frame, name, nameLength, value, valueLength, _, userData in
        guard let session = session(userData), let frame, let name, let value else { return 0 }
        let stream = frame.pointee.hd.stream_id
        guard var block = session.incomingHeaders[stream] else { return 0 }
        // RFC 9113 section 6.5.2: each field counts its name, its value and 32 bytes.
        block.bytes += nameLength + valueLength + 32
        guard block.bytes <= session.limits.maxHeaderListSize else {
            session.incomingHeaders[stream] = nil
            session.reportedResets.insert(stream)
            session.events.append(
                .refused(
                    stream: stream,
                    reason: "the server sent a header block over \(session.limits.maxHeaderListSize) bytes"
                )
            )
            // Resets this stream only; the connection and its other streams go on.
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE.rawValue
        }
        block.fields.add(
            name: String(decoding: UnsafeBufferPointer(start: name, count: nameLength), as: UTF8.self),
            value: String(decoding: UnsafeBufferPointer(start: value, count: valueLength), as: UTF8.self)
        )
        session.incomingHeaders[stream] = block
        return 0
    }

    static let frameReceived: nghttp2_on_frame_recv_callback = { _, frame, userData in
        guard let session = session(userData), let frame else { return 0 }
        session.frameReceived(frame.pointee)
        return 0
    }

    static let dataChunk: nghttp2_on_data_chunk_recv_callback = { _, _, stream, data, length, userData in
        guard let session = session(userData), let data, length > 0 else { return 0 }
        session.bodyLengths[stream]?.received += length
        session.events.append(.data(stream: stream, Array(UnsafeBufferPointer(start: data, count: length))))
        return 0
    }

    static let streamClosed: nghttp2_on_stream_close_callback = { _, stream, errorCode, userData in
        guard let session = session(userData) else { return 0 }
        session.streamClosed(stream, errorCode: errorCode)
        return 0
    }

    /// nghttp2 explains an error it found in what the peer sent; kept for the error the session
    /// reports if it ends the connection.
    static let error: nghttp2_error_callback2 = { _, _, message, length, userData in
        guard let session = session(userData), let message else { return 0 }
        session.lastProblem = String(
            decoding: UnsafeRawBufferPointer(start: message, count: min(length, 512)),
            as: UTF8.self
        )
        return 0
    }

    /// `nghttp2_data_source_read_callback` for request bodies: copies what the owner has given,
    /// defers when it has given nothing more yet, and ends the stream after the last byte.
    static let readBody: nghttp2_data_source_read_callback = { _, stream, buffer, length, flags, _, userData in
        guard let session = session(userData), let buffer, let flags else {
            return Int(NGHTTP2_ERR_CALLBACK_FAILURE.rawValue)
        }
        return session.readBody(stream, into: UnsafeMutableRawBufferPointer(start: buffer, count: length), flags: flags)
    }
}
