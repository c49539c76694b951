internal import COpenSSL

/// The OpenSSL error queue of the calling thread, drained into values right where a call failed.
struct OpenSSLErrorStack: Sendable, CustomStringConvertible {
    struct Entry: Sendable {
        let code: UInt
        let text: String
        var library: Int32 { Int32((code >> 23) & 0xFF) }
        var reason: Int32 { Int32(code & 0x7FFFFF) }
    }

    let entries: [Entry]

    /// Empties the queue before a call whose failure will be inspected. Most of the time it is
    /// already empty: looking costs less than clearing (which resets all 16 slots), and this runs
    /// several times per request.
    static func clear() {
        if ERR_peek_error() != 0 { ERR_clear_error() }
    }

    /// Takes every entry off the queue (oldest first).
    static func drain() -> OpenSSLErrorStack {
        var entries: [Entry] = []
        while true {
            let code = ERR_get_error()
            if code == 0 { break }
            var buffer = [CChar](repeating: 0, count: 256)
            ERR_error_string_n(code, &buffer, buffer.count)
            let text = stringFromCBuffer(buffer)
            entries.append(Entry(code: code, text: text))
        }
        return OpenSSLErrorStack(entries: entries)
    }

    /// True when any entry has this library and reason.
    func contains(library: Int32, reason: Int32) -> Bool {
        entries.contains { $0.library == library && $0.reason == reason }
    }

    /// The reason strings alone ("mac verify failure"), most specific last.
    var reasons: [String] {
        entries.map { entry in
            if let r = ERR_reason_error_string(entry.code) { return String(cString: r) }
            return entry.text
        }
    }

    var description: String { entries.isEmpty ? "no OpenSSL error recorded" : reasons.joined(separator: "; ") }
}
