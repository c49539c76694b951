extension Array where Element == UInt8 {
    /// Lower-case hexadecimal, optionally with a separator between bytes.
    /// Built byte by byte: `String(format:)` costs microseconds per byte on Linux, and Digest hashes
    /// several values per request.
    func hexString(separator: String = "") -> String {
        guard separator.isEmpty else {
            return map { HexDigits.encode(CollectionOfOne($0)) }.joined(separator: separator)
        }
        return HexDigits.encode(self)
    }
}

enum HexDigits {
    /// Lower-case hexadecimal of `bytes`, written straight into the string's storage.
    static func encode<Bytes: Collection<UInt8>>(_ bytes: Bytes) -> String {
        String(unsafeUninitializedCapacity: bytes.count * 2) { text in
            var index = 0
            for byte in bytes {
                text[index] = digit(byte >> 4)
                text[index + 1] = digit(byte & 0x0F)
                index += 2
            }
            return index
        }
    }

    @inline(__always) private static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? 0x30 + value : 0x61 + value - 10
    }
}
