extension Array where Element == UInt8 {
    /// Lower-case hexadecimal, optionally with a separator between bytes.
    /// Built byte by byte: `String(format:)` costs microseconds per byte on Linux, and Digest hashes
    /// several values per request.
    func hexString(separator: String = "") -> String {
        let digits = Array("0123456789abcdef".utf8)
        let separatorBytes = Array(separator.utf8)
        var text: [UInt8] = []
        text.reserveCapacity(count * (2 + separatorBytes.count))
        for (index, byte) in enumerated() {
            if index > 0 { text += separatorBytes }
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }
}
