/// Keeps every frame header (RFC 9113 section 4.1: 9 bytes) of what the peer sends in one piece
/// of input to nghttp2. nghttp2 counts a CONTINUATION frame against its limit once per call that
/// sees part of the frame's header (nghttp2 issue 2817): a 30 KiB header block read one byte at a
/// time failed with "too many CONTINUATION frames". So a header cut short by a read is held back
/// until its other bytes come; payloads may be split anywhere.
struct HTTP2FrameHeaderAligner {
    static let headerSize = 9
    /// Payload bytes of the current frame still to come.
    private var payloadLeft = 0
    /// The start of a frame header the last read cut short.
    private(set) var held: [UInt8] = []

    /// Adds held bytes from the front of `bytes` (as many as the header lacks); returns how many
    /// it took and, once the header is whole, that header to feed first.
    mutating func completeHeld(from bytes: UnsafeRawBufferPointer) -> (taken: Int, header: [UInt8]?) {
        guard !held.isEmpty else { return (0, nil) }
        let taken = min(Self.headerSize - held.count, bytes.count)
        held += bytes[0..<taken]
        guard held.count == Self.headerSize else { return (taken, nil) }
        let header = held
        held = []
        payloadLeft = Self.payloadLength(header[0], header[1], header[2])
        return (taken, header)
    }

    /// How many bytes from the front of `bytes` end outside a frame header (at a payload's
    /// boundary or inside one); the header cut short after them is kept in ``held``.
    mutating func wholePrefix(of bytes: UnsafeRawBufferPointer) -> Int {
        var position = 0
        while position < bytes.count {
            if payloadLeft > 0 {
                let step = min(payloadLeft, bytes.count - position)
                position += step
                payloadLeft -= step
                continue
            }
            guard bytes.count - position >= Self.headerSize else {
                held = Array(bytes[position...])
                return position
            }
            payloadLeft = Self.payloadLength(bytes[position], bytes[position + 1], bytes[position + 2])
            position += Self.headerSize
        }
        return position
    }

    private static func payloadLength(_ high: UInt8, _ middle: UInt8, _ low: UInt8) -> Int {
        Int(high) << 16 | Int(middle) << 8 | Int(low)
    }
}
