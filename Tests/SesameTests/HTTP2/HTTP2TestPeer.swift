internal import CNGHTTP2
import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// A server side written frame by frame, for testing ``HTTP2Session`` in memory: it builds any
/// frame (well-formed or hostile) and reads the client's, decoding request header blocks with
/// nghttp2's HPACK decoder.
final class HTTP2TestPeer {
    typealias Frame = HTTP2Frames.Frame

    static let data = HTTP2Frames.data, headers = HTTP2Frames.headers, rstStream = HTTP2Frames.rstStream
    static let settings = HTTP2Frames.settings, ping = HTTP2Frames.ping, goAway = HTTP2Frames.goAway
    static let windowUpdate = HTTP2Frames.windowUpdate, continuation = HTTP2Frames.continuation
    static let endStream = HTTP2Frames.endStream, endHeaders = HTTP2Frames.endHeaders, ack = HTTP2Frames.ack

    private var inflater: OpaquePointer?
    private var pending: [UInt8] = []
    private var sawPreface = false

    init() { _ = nghttp2_hd_inflate_new(&inflater) }
    deinit { nghttp2_hd_inflate_del(inflater) }

    // MARK: Frames to the client (HTTP2Frames, from SesameTesting)

    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: Int32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        HTTP2Frames.frame(type, flags: flags, stream: stream, payload)
    }

    static func settingsFrame(_ entries: [(UInt16, UInt32)] = []) -> [UInt8] { HTTP2Frames.settingsFrame(entries) }

    static func headersFrame(
        stream: Int32,
        status: Int? = 200,
        fields: [(String, String)] = [],
        endStream: Bool = false
    ) -> [UInt8] {
        HTTP2Frames.headersFrame(stream: stream, status: status, fields: fields, endStream: endStream)
    }

    static func dataFrame(stream: Int32, _ bytes: [UInt8], endStream: Bool = false) -> [UInt8] {
        HTTP2Frames.dataFrame(stream: stream, bytes, endStream: endStream)
    }

    static func resetFrame(stream: Int32, code: UInt32) -> [UInt8] {
        HTTP2Frames.resetFrame(stream: stream, code: code)
    }

    static func goAwayFrame(lastStream: Int32, code: UInt32, debug: String = "") -> [UInt8] {
        HTTP2Frames.goAwayFrame(lastStream: lastStream, code: code, debug: debug)
    }

    static func windowUpdateFrame(stream: Int32, increment: UInt32) -> [UInt8] {
        HTTP2Frames.windowUpdateFrame(stream: stream, increment: increment)
    }

    static func block(_ fields: [(String, String)]) -> [UInt8] { HTTP2Frames.block(fields) }

    // MARK: The client's frames

    /// Parses what the client sent (its connection preface first).
    func frames(from bytes: [UInt8]) -> [Frame] {
        pending += bytes
        if !sawPreface {
            let preface = HTTP2Frames.preface
            guard pending.count >= preface.count else { return [] }
            #expect(Array(pending.prefix(preface.count)) == preface, "the client's connection preface")
            pending.removeFirst(preface.count)
            sawPreface = true
        }
        return HTTP2Frames.takeFrames(from: &pending)
    }

    /// Decodes a request's header block (one HEADERS frame with END_HEADERS, no padding or priority).
    func fields(of frame: Frame) -> [(String, String)] {
        var fields: [(String, String)] = []
        var offset = 0
        let block = frame.payload
        while true {
            var pair = nghttp2_nv()
            var flags: Int32 = 0
            let used = block.withUnsafeBufferPointer {
                nghttp2_hd_inflate_hd2(
                    inflater,
                    &pair,
                    &flags,
                    $0.baseAddress.map { $0 + offset },
                    $0.count - offset,
                    1
                )
            }
            guard used >= 0 else { return fields }
            offset += used
            if flags & Int32(NGHTTP2_HD_INFLATE_EMIT.rawValue) != 0 {
                fields.append(
                    (
                        String(decoding: UnsafeBufferPointer(start: pair.name, count: pair.namelen), as: UTF8.self),
                        String(decoding: UnsafeBufferPointer(start: pair.value, count: pair.valuelen), as: UTF8.self)
                    )
                )
            }
            if flags & Int32(NGHTTP2_HD_INFLATE_FINAL.rawValue) != 0 {
                nghttp2_hd_inflate_end_headers(inflater)
                return fields
            }
            if used == 0, flags & Int32(NGHTTP2_HD_INFLATE_EMIT.rawValue) == 0 { return fields }
        }
    }
}

extension HTTP2Session {
    func output() throws -> [UInt8] { try outputAndEvents().bytes }

    func outputAndEvents() throws -> (bytes: [UInt8], events: [Event]) {
        var bytes: [UInt8] = []
        let events = try drainOutput(into: &bytes)
        return (bytes, events)
    }
}
