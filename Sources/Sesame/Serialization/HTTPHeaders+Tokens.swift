// Fields holding comma-separated lists (Connection, Transfer-Encoding, Content-Encoding), read in
// place: every response is checked for several of them, so no list or string is built to answer.
extension HTTPHeaders {
    /// Calls `body` with each element of the comma-separated lists in the fields named `name`, in
    /// order, trimmed of spaces and tabs, empty elements skipped, until `body` returns false. The
    /// bytes are valid only during the call.
    func forEachToken(in name: String, _ body: (UnsafeBufferPointer<UInt8>) -> Bool) {
        for field in fields where field.name.caseInsensitiveEquals(name) {
            var value = field.value
            let goOn = value.withUTF8 { bytes -> Bool in
                var start = 0
                while start <= bytes.count {
                    var end = start
                    while end < bytes.count && bytes[end] != UInt8(ascii: ",") { end += 1 }
                    var low = start
                    var high = end
                    while low < high && isSpaceOrTab(bytes[low]) { low += 1 }
                    while high > low && isSpaceOrTab(bytes[high - 1]) { high -= 1 }
                    if low < high && !body(UnsafeBufferPointer(rebasing: bytes[low..<high])) { return false }
                    start = end + 1
                }
                return true
            }
            if !goOn { return }
        }
    }

    /// Whether a comma-separated list field named `name` holds `token` (ASCII case-insensitive).
    func containsToken(_ token: String, in name: String) -> Bool {
        var wanted = token
        return wanted.withUTF8 { wanted in
            var found = false
            forEachToken(in: name) { candidate in
                found = equalsIgnoringASCIICase(candidate, wanted)
                return !found
            }
            return found
        }
    }
}

@inline(__always) private func isSpaceOrTab(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }

/// Whether two byte strings are equal, ASCII letters compared case-insensitively.
func equalsIgnoringASCIICase(_ a: UnsafeBufferPointer<UInt8>, _ b: UnsafeBufferPointer<UInt8>) -> Bool {
    guard a.count == b.count else { return false }
    for index in 0..<a.count where a[index] != b[index] && asciiLower(a[index]) != asciiLower(b[index]) {
        return false
    }
    return true
}

/// Whether `bytes` equal `text` (a literal), ASCII letters compared case-insensitively.
func equalsIgnoringASCIICase(_ bytes: UnsafeBufferPointer<UInt8>, _ text: StaticString) -> Bool {
    equalsIgnoringASCIICase(bytes, UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
}
