import FoundationEssentials
import Glibc

/// curl's cookie files (the Netscape format): one cookie per line, seven tab-separated fields —
/// domain, include-subdomains, path, secure, expiry (Unix time, 0 for a session cookie), name,
/// value — with `#HttpOnly_` before the domain of HttpOnly cookies and `#` comments.
extension CookieStore {
    /// A line of a cookie file that was skipped, and why.
    public struct FileProblem: Sendable, Hashable, CustomStringConvertible {
        /// The file, as given.
        public let source: String
        /// The line number, from 1.
        public let line: Int
        /// Why the line was skipped.
        public let reason: String

        public var description: String { "\(source):\(line): \(reason)" }
    }

    /// Adds the cookies of a Netscape cookie file. Expired cookies are skipped, and so are lines
    /// that are not cookies in that format (as curl skips them): each such line is returned.
    /// - Returns: the lines skipped, with their reasons (nothing secret: no value is quoted).
    /// - Throws: ``SesameError/Code/fileUnreadable`` when the file cannot be read or is not a
    ///   regular file, ``SesameError/Code/fileTooLarge`` past 32 MB (``UserFile/Kind/cookies``).
    @discardableResult
    public func load(netscapeFile url: URL) throws -> [FileProblem] {
        let data = try UserFile.read(url.path, as: .cookies)
        // In batches: the store keeps at most `maximumTotal` cookies, so a large file costs memory
        // for one batch, not for all of its lines.
        return Self.parseNetscape(String(decoding: data, as: UTF8.self), source: url.path, batchSize: 5_000) {
            set(contentsOf: $0)
        }
    }

    /// Writes every cookie (session cookies too, with expiry 0) as a Netscape cookie file,
    /// replacing `url` atomically, readable by its owner only. A cookie with a tab or another
    /// control character in a field (which only ``set(_:from:)`` can store) is left out: written, it
    /// would break the file's format.
    public func save(netscapeFile url: URL) throws {
        var lines = [
            "# Netscape HTTP Cookie File", "# Written by Sesame. Each line is one cookie; edit at your own risk.", "",
        ]
        lines += allCookies.compactMap(Self.netscapeLine)
        let text = lines.joined(separator: "\n") + "\n"
        do {
            try PosixFile.replace(url.path, with: Array(text.utf8), mode: 0o600)
        } catch {
            throw SesameError(.ioError, "cannot write the cookie file '\(url.path)': \(error)")
        }
    }

    /// `cookie` as a line of a cookie file; nil when a field holds a control character (a tab
    /// would split the field, a line break the line).
    static func netscapeLine(_ cookie: Cookie) -> String? {
        let domain = cookie.isHostOnly ? cookie.domain : "." + cookie.domain
        let fields = [
            (cookie.isHTTPOnly ? "#HttpOnly_" : "") + domain,
            cookie.isHostOnly ? "FALSE" : "TRUE",
            cookie.path,
            cookie.isSecure ? "TRUE" : "FALSE",
            String(Int(cookie.expires?.timeIntervalSince1970 ?? 0)),
            cookie.name,
            cookie.value,
        ]
        guard !fields.contains(where: hasControlCharacter) else { return nil }
        return fields.joined(separator: "\t")
    }

    /// A tab, line break or other control character: what no field of a cookie file may hold.
    static func hasControlCharacter(_ text: String) -> Bool {
        text.utf8.contains { $0 < 0x20 || $0 == 0x7F }
    }

    /// The cookies of a cookie file's text, and the lines skipped. Linear in the text's length.
    static func parseNetscape(_ text: String, source: String) -> ([Cookie], [FileProblem]) {
        var cookies: [Cookie] = []
        let problems = parseNetscape(text, source: source, batchSize: .max) { cookies += $0 }
        return (cookies, problems)
    }

    /// The same, handing the cookies over `batchSize` at a time, in the file's order.
    @discardableResult
    static func parseNetscape(
        _ text: String,
        source: String,
        batchSize: Int,
        _ take: ([Cookie]) -> Void
    ) -> [FileProblem] {
        var cookies: [Cookie] = []
        var problems: [FileProblem] = []
        let now = Date()
        var index = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            switch parseLine(rawLine, index: index, now: now) {
            case .cookie(let cookie): if !cookie.isExpired(at: now) { cookies.append(cookie) }
            case .skip: break
            case .problem(let reason): problems.append(FileProblem(source: source, line: index + 1, reason: reason))
            }
            index += 1
            if cookies.count >= batchSize {
                take(cookies)
                cookies.removeAll(keepingCapacity: true)
            }
        }
        if !cookies.isEmpty { take(cookies) }
        return problems
    }

    private enum Line {
        case cookie(Cookie)
        case skip
        case problem(String)
    }

    private static func parseLine(_ rawLine: Substring, index: Int, now: Date) -> Line {
        var line = rawLine
        if line.hasSuffix("\r") { line.removeLast() }
        var httpOnly = false
        if line.hasPrefix("#HttpOnly_") {
            httpOnly = true
            line.removeFirst("#HttpOnly_".count)
        } else if line.hasPrefix("#") || line.allSatisfy({ $0 == " " || $0 == "\t" }) {
            return .skip
        }
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        guard fields.count == 7 || fields.count == 6 else {
            return .problem("expected 7 tab-separated fields, found \(fields.count)")
        }
        guard let expiry = Int64(fields[4]), let includesSubdomains = flag(fields[1]), let secure = flag(fields[3]),
            fields[2].hasPrefix("/")
        else {
            return .problem("the flags, path or expiry are not in the Netscape format")
        }
        var domain = fields[0].lowercased()
        if domain.hasPrefix(".") { domain.removeFirst() }
        domain = CookieRules.canonicalHost(domain)
        guard !domain.isEmpty, !fields[5].isEmpty else { return .problem("a cookie needs a domain and a name") }
        guard !fields.contains(where: { hasControlCharacter(String($0)) }) else {
            return .problem("a field holds a control character")
        }
        let cookie = Cookie(
            name: String(fields[5]),
            value: fields.count == 7 ? String(fields[6]) : "",
            domain: domain,
            isHostOnly: !includesSubdomains,
            path: String(fields[2]),
            expires: expiry == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(expiry)),
            isSecure: secure,
            isHTTPOnly: httpOnly,
            created: now.addingTimeInterval(Double(index) / 1000)
        )
        // As cookies from Set-Cookie: a file cannot plant what a server could not.
        if let refusal = CookieRules.refusal(cookie, from: nil) { return .problem("refused: \(refusal)") }
        return .cookie(cookie)
    }

    private static func flag(_ field: Substring) -> Bool? {
        if field.caseInsensitiveEquals("TRUE") { return true }
        if field.caseInsensitiveEquals("FALSE") { return false }
        return nil
    }
}
