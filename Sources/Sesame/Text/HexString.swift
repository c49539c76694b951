extension Array where Element == UInt8 {
    /// Lower-case hexadecimal, optionally with a separator between bytes.
    /// Written byte by byte into the string's storage: Digest hashes several values per request.
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

    /// Upper-case hexadecimal of `value`, `width` digits (leading zeros).
    static func upper<Value: FixedWidthInteger>(_ value: Value, width: Int = MemoryLayout<Value>.size * 2) -> String {
        String(unsafeUninitializedCapacity: width) { text in
            var rest = value
            for index in stride(from: width - 1, through: 0, by: -1) {
                let nibble = UInt8(truncatingIfNeeded: rest & 0x0F)
                text[index] = nibble < 10 ? 0x30 + nibble : 0x41 + nibble - 10
                rest >>= 4
            }
            return width
        }
    }

    /// `%XX`, the percent-escape of `byte`, upper-case as RFC 3986 section 2.1 recommends.
    static func percentEscape(_ byte: UInt8) -> String { "%" + upper(byte) }

    /// The value of one hexadecimal digit (either case), or nil.
    static func value(_ digit: UInt8) -> UInt8? {
        switch digit {
        case 0x30...0x39: digit - 0x30
        case 0x41...0x46: digit - 0x41 + 10
        case 0x61...0x66: digit - 0x61 + 10
        default: nil
        }
    }

    @inline(__always) private static func digit(_ value: UInt8) -> UInt8 {
        value < 10 ? 0x30 + value : 0x61 + value - 10
    }
}
