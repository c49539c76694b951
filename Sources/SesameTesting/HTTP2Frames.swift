/// HTTP/2 frames written byte by byte (RFC 9113 section 4), well-formed or hostile, with header
/// blocks of HPACK literals (RFC 7541 section 6.2.2): what a test server needs to say anything.
public enum HTTP2Frames {
    /// The `DATA` frame type.
    public static let data: UInt8 = 0
    /// The `HEADERS` frame type.
    public static let headers: UInt8 = 1
    /// The `RST_STREAM` frame type.
    public static let rstStream: UInt8 = 3
    /// The `SETTINGS` frame type.
    public static let settings: UInt8 = 4
    /// The `PING` frame type.
    public static let ping: UInt8 = 6
    /// The `GOAWAY` frame type.
    public static let goAway: UInt8 = 7
    /// The `WINDOW_UPDATE` frame type.
    public static let windowUpdate: UInt8 = 8
    /// The `CONTINUATION` frame type.
    public static let continuation: UInt8 = 9
    /// The `END_STREAM` flag of `DATA` and `HEADERS`.
    public static let endStream: UInt8 = 0x1
    /// The `END_HEADERS` flag of `HEADERS` and `CONTINUATION`.
    public static let endHeaders: UInt8 = 0x4
    /// The `ACK` flag of `SETTINGS` and `PING`.
    public static let ack: UInt8 = 0x1

    /// The client's connection preface.
    public static let preface = Array("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".utf8)

    /// A frame of `type` with `flags` on `stream` carrying `payload`, with its 9-byte header.
    public static func frame(_ type: UInt8, flags: UInt8 = 0, stream: Int32 = 0, _ payload: [UInt8] = []) -> [UInt8] {
        let length = payload.count
        return [UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), type, flags]
            + bigEndian(UInt32(stream)) + payload
    }

    /// A `SETTINGS` frame with these identifier and value pairs.
    public static func settingsFrame(_ entries: [(UInt16, UInt32)] = []) -> [UInt8] {
        frame(settings, entries.flatMap { [UInt8($0.0 >> 8), UInt8($0.0 & 0xFF)] + bigEndian($0.1) })
    }

    /// A `HEADERS` frame (with `END_HEADERS`) carrying `:status` (unless nil) and `fields` as HPACK
    /// literals.
    public static func headersFrame(
        stream: Int32,
        status: Int? = 200,
        fields: [(String, String)] = [],
        endStream: Bool = false
    ) -> [UInt8] {
        let all = (status.map { [(":status", String($0))] } ?? []) + fields
        return frame(headers, flags: endHeaders | (endStream ? Self.endStream : 0), stream: stream, block(all))
    }

    /// A `DATA` frame carrying `bytes`.
    public static func dataFrame(stream: Int32, _ bytes: [UInt8], endStream: Bool = false) -> [UInt8] {
        frame(data, flags: endStream ? Self.endStream : 0, stream: stream, bytes)
    }

    /// A `RST_STREAM` frame with error `code`.
    public static func resetFrame(stream: Int32, code: UInt32) -> [UInt8] {
        frame(rstStream, stream: stream, bigEndian(code))
    }

    /// A `GOAWAY` frame naming `lastStream` with error `code` and `debug` data.
    public static func goAwayFrame(lastStream: Int32, code: UInt32, debug: String = "") -> [UInt8] {
        frame(goAway, bigEndian(UInt32(lastStream)) + bigEndian(code) + Array(debug.utf8))
    }

    /// A `WINDOW_UPDATE` frame opening `stream`'s window (0: the connection's) by `increment`.
    public static func windowUpdateFrame(stream: Int32, increment: UInt32) -> [UInt8] {
        frame(windowUpdate, stream: stream, bigEndian(increment))
    }

    /// An HPACK header block of literal fields without indexing.
    public static func block(_ fields: [(String, String)]) -> [UInt8] {
        var out: [UInt8] = []
        for (name, value) in fields {
            out.append(0)
            out += integer(name.utf8.count) + Array(name.utf8)
            out += integer(value.utf8.count) + Array(value.utf8)
        }
        return out
    }

    /// An HPACK integer with a 7-bit prefix and no Huffman flag.
    public static func integer(_ value: Int) -> [UInt8] {
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

    /// `value` as 4 bytes, most significant first.
    public static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    /// A frame as it came from the peer.
    public struct Frame: Equatable, Sendable {
        /// The frame type.
        public var type: UInt8
        /// The flags.
        public var flags: UInt8
        /// The stream identifier (0 for the connection).
        public var stream: Int32
        /// The payload, without the 9-byte header.
        public var payload: [UInt8]
    }

    /// Takes the whole frames at the front of `pending`.
    public static func takeFrames(from pending: inout [UInt8]) -> [Frame] {
        var frames: [Frame] = []
        var offset = 0
        while pending.count - offset >= 9 {
            let length = Int(pending[offset]) << 16 | Int(pending[offset + 1]) << 8 | Int(pending[offset + 2])
            guard pending.count - offset >= 9 + length else { break }
            let id =
                UInt32(pending[offset + 5]) << 24 | UInt32(pending[offset + 6]) << 16 | UInt32(pending[offset + 7]) << 8
                | UInt32(pending[offset + 8])
            frames.append(
                Frame(
                    type: pending[offset + 3],
                    flags: pending[offset + 4],
                    stream: Int32(bitPattern: id & 0x7FFF_FFFF),
                    payload: Array(pending[(offset + 9)..<(offset + 9 + length)])
                )
            )
            offset += 9 + length
        }
        pending.removeFirst(offset)
        return frames
    }
}
