// Lines, field lines and the buffer they are read from.
extension HTTP1ResponseParser {
    /// The next line without its terminator (CRLF, or a bare LF as RFC 9112 section 2.2 allows), as
    /// a range of `buffer` valid until the next `feed`, or nil when the buffer does not hold a whole
    /// line yet.
    mutating func nextLine(limit: Int, what: String) throws -> Range<Int>? {
        let start = position
        let end = buffer.count
        // The newline, and the first CR before it (one pass).
        let (newline, firstCR) = buffer.withUnsafeBufferPointer { bytes -> (Int?, Int?) in
            var firstCR: Int?
            var index = start
            while index < end {
                let byte = bytes[index]
                if byte == 0x0A { return (index, firstCR) }
                if byte == 0x0D && firstCR == nil { firstCR = index }
                index += 1
            }
            return (nil, firstCR)
        }
        guard let newline else {
            if end - start > limit + 1 { throw protocolError("\(what) longer than \(limit) bytes") }
            return nil
        }
        var lineEnd = newline
        if lineEnd > start && buffer[lineEnd - 1] == 0x0D { lineEnd -= 1 }
        if let firstCR, firstCR < lineEnd { throw protocolError("a bare CR inside a \(what)") }
        guard lineEnd - start <= limit else { throw protocolError("\(what) longer than \(limit) bytes") }
        position = newline + 1
        return start..<lineEnd
    }

    /// Parses a field line of the head or the trailers into `fields`.
    mutating func appendFieldLine(_ range: Range<Int>, section: String) throws {
        let line = buffer[range]
        if line.first == 0x20 || line.first == 0x09 {
            // obs-fold: RFC 9112 section 5.2 tells user agents to replace it with SP.
            guard !fields.isEmpty else {
                throw protocolError("a \(section) section starts with a continuation line")
            }
            fields.appendToLastValue(" " + String(decoding: Self.trimmed(line), as: UTF8.self))
            return
        }
        let (name, value) = try Self.field(line, section: section)
        if fields.isEmpty { fields.reserveCapacity(16) }  // most heads fit: no growing field by field
        fields.add(name: name, value: value)
        guard fields.count <= limits.maximumFieldCount else {
            throw protocolError("more than \(limits.maximumFieldCount) \(section) fields")
        }
    }

    func protocolError(_ detail: String) -> SesameError { SesameError(.protocolError, detail) }

    /// The next `count` bytes of the buffer; the whole buffer is handed over without a copy.
    mutating func takeBody(_ count: Int) -> [UInt8] {
        if position == 0 && count == buffer.count {
            let whole = buffer
            buffer = []
            return whole
        }
        let piece = Array(buffer[position..<position + count])
        position += count
        return piece
    }

    mutating func compact() {
        if position == buffer.count {
            // Not keeping the capacity: the next bytes are taken as they come (see `feed`), and the
            // buffer is often still shared with them, so keeping it would allocate a copy.
            buffer = []
            position = 0
        } else if position > 1 << 16 {
            buffer.removeFirst(position)
            position = 0
        }
    }
}
