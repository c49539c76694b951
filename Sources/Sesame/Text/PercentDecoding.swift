extension StringProtocol {
    /// The text with each `%XX` escape replaced by its byte, read as UTF-8; nil when an escape is
    /// not two hexadecimal digits or the bytes are not UTF-8 (Foundation's
    /// `removingPercentEncoding`).
    package func percentDecoded() -> String? {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var iterator = utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(HexDigits.value),
                let low = iterator.next().flatMap(HexDigits.value)
            else { return nil }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }
}
