internal import CNGHTTP2
import Foundation
import Testing

@testable import Sesame

/// A server side written frame by frame, for testing ``HTTP2Session`` in memory: it builds any
/// frame (well-formed or hostile) and reads the client's, decoding request header blocks with
/// nghttp2's HPACK decoder.
final class HTTP2TestPeer {
    struct Frame: Equatable {
        var type: UInt8
        var flags: UInt8
        var stream: Int32
        var payload: [UInt8]
    }

    static let data: UInt8 = 0, headers: UInt8 = 1, rstStream: UInt8 = 3, settings: UInt8 = 4, ping: UInt8 = 6
    static let goAway: UInt8 = 7, windowUpdate: UInt8 = 8, continuation: UInt8 = 9
    static let endStream: UInt8 = 0x1, endHeaders: UInt8 = 0x4, ack: UInt8 = 0x1

    private var inflater: OpaquePointer?
    private var pending: [UInt8] = []
    private var sawPreface = false

    init() { _ = nghttp2_hd_inflate_new(&inflater) }
    deinit { nghttp2_hd_inflate_del(inflater) }

    // MARK: Frames to the client

    static func frame(_ type: UInt8, flags: UInt8 = 0, stream: Int32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
            + bigEndian(UInt32(stream)) + payload
    }

    static func settingsFrame(_ entries: [(UInt16, UInt32)] = []) -> [UInt8] {
        frame(settings, entries.flatMap { [UInt8($0.0 >> 8), UInt8($0.0 & 0xFF)] + bigEndian($0.1) })
    }

    static func headersFrame(
        stream: Int32,
        status: Int? = 200,
        fields: [(String, String)] = [],
        endStream: Bool = false
    )
        -> [UInt8]
    {
        let all = (status.map { [(":status", String($0))] } ?? []) + fields
        return frame(headers, flags: endHeaders | (endStream ? Self.endStream : 0), stream: stream, block(all))
    }

    static func dataFrame(stream: Int32, _ bytes: [UInt8], endStream: Bool = false) -> [UInt8] {
        frame(data, flags: endStream ? Self.endStream : 0, stream: stream, bytes)
    }

    static func resetFrame(stream: Int32, code: UInt32) -> [UInt8] { frame(rstStream, stream: stream, bigEndian(code)) }

    static func goAwayFrame(lastStream: Int32, code: UInt32, debug: String = "") -> [UInt8] {
        frame(goAway, bigEndian(UInt32(lastStream)) + bigEndian(code) + Array(debug.utf8))
    }

    static func windowUpdateFrame(stream: Int32, increment: UInt32) -> [UInt8] {
        frame(windowUpdate, stream: stream, bigEndian(increment))
    }

    /// An HPACK header block of literal fields without indexing (RFC 7541 section 6.2.2).
    static func block(_ fields: [(String, String)]) -> [UInt8] {
        var out: [UInt8] = []
        for (name, value) in fields {
            out.append(0)
            out += integer(name.utf8.count) + Array(name.utf8)
            out += integer(value.utf8.count) + Array(value.utf8)
        }
        return out
    }

    /// An HPACK integer with a 7-bit prefix and no Huffman flag.
    static func integer(_ value: Int) -> [UInt8] {
        guard value >= 127 else { return [UInt8(value)] }
        var out: [UInt8] = [127]
        var rest = value - 127
        while rest >= 128 {
            out.append(UInt8(rest & 0x7F | 0x80))
            rest >>= 7
        }
        out.append(UInt8(rest))
        return out
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    // MARK: The client's frames

    /// Parses what the client sent (its connection preface first).
    func frames(from bytes: [UInt8]) -> [Frame] {
        pending += bytes
        if !sawPreface {
            let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)
            guard pending.count >= preface.count else { return [] }
            #expect(Array(pending.prefix(preface.count)) == preface, "the client's connection preface")
            pending.removeFirst(preface.count)
            sawPreface = true
        }
        var frames: [Frame] = []
        while pending.count >= 9 {
            let length = Int(pending[0]) << 16 | Int(pending[1]) << 8 | Int(pending[2])
            guard pending.count >= 9 + length else { break }
            let stream =
                Int32(
                    bitPattern: UInt32(pending[5]) << 24 | UInt32(pending[6]) << 16 | UInt32(pending[7]) << 8
                        | UInt32(pending[8])
                ) & 0x7FFF_FFFF
            frames.append(
                Frame(type: pending[3], flags: pending[4], stream: stream, payload: Array(pending[9..<(9 + length)]))
            )
            pending.removeFirst(9 + length)
        }
        return frames
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
