import Foundation

/// curl's cookie files (the Netscape format): one cookie per line, seven tab-separated fields —
/// domain, include-subdomains, path, secure, expiry (Unix time, 0 for a session cookie), name,
/// value — with `#HttpOnly_` before the domain of HttpOnly cookies and `#` comments.
extension CookieStore {
    /// Adds the cookies of a Netscape cookie file (expired ones are skipped).
    /// - Throws: ``SesameError/Code/cookieJarInvalid`` naming the file and line of a malformed
    ///   entry; ``SesameError/Code/fileUnreadable`` when the file cannot be read.
    public func load(netscapeFile url: URL) throws {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            throw SesameError(.fileUnreadable, "cannot read the cookie file '\(url.path)'")
        }
        let cookies = try Self.parseNetscape(String(decoding: data, as: UTF8.self), source: url.path)
        for cookie in cookies { set(cookie) }
    }

    /// Writes every cookie (session cookies too, with expiry 0) as a Netscape cookie file,
    /// replacing `url` atomically, readable by its owner only.
    public func save(netscapeFile url: URL) throws {
        var lines = [
            "# Netscape HTTP Cookie File", "# Written by Sesame. Each line is one cookie; edit at your own risk.", "",
        ]
        for cookie in allCookies {
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
            lines.append(fields.joined(separator: "\t"))
        }
        let text = lines.joined(separator: "\n") + "\n"
        do {
            try PosixFile.replace(url.path, with: Array(text.utf8), mode: 0o600)
        } catch {
            throw SesameError(.ioError, "cannot write the cookie file '\(url.path)': \(error)")
        }
    }

    static func parseNetscape(_ text: String, source: String) throws -> [Cookie] {
        var cookies: [Cookie] = []
        let now = Date()
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            var line = String(rawLine)
            if line.hasSuffix("\r") { line.removeLast() }
            var httpOnly = false
            if line.hasPrefix("#HttpOnly_") {
                httpOnly = true
                line.removeFirst("#HttpOnly_".count)
            } else if line.hasPrefix("#") || line.trimmingCharacters(in: .whitespaces).isEmpty {
                continue
            }
            let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
            guard fields.count == 7 || fields.count == 6 else {
                throw SesameError(
                    .cookieJarInvalid,
                    "\(source):\(index + 1): expected 7 tab-separated fields, found \(fields.count)"
                )
            }
            guard let expiry = Int64(fields[4]), ["TRUE", "FALSE"].contains(fields[1].uppercased()),
                ["TRUE", "FALSE"].contains(fields[3].uppercased()), fields[2].hasPrefix("/")
            else {
                throw SesameError(
                    .cookieJarInvalid,
                    "\(source):\(index + 1): the flags, path or expiry are not in the Netscape format"
                )
            }
            var domain = fields[0].lowercased()
            let includesSubdomains = fields[1].uppercased() == "TRUE"
            if domain.hasPrefix(".") { domain.removeFirst() }
            guard !domain.isEmpty, !fields[5].isEmpty else {
                throw SesameError(.cookieJarInvalid, "\(source):\(index + 1): a cookie needs a domain and a name")
            }
            let cookie = Cookie(
                name: fields[5],
                value: fields.count == 7 ? fields[6] : "",
                domain: domain,
                isHostOnly: !includesSubdomains,
                path: fields[2],
                expires: expiry == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(expiry)),
                isSecure: fields[3].uppercased() == "TRUE",
                isHTTPOnly: httpOnly,
                created: now.addingTimeInterval(Double(index) / 1000)
            )
            if !cookie.isExpired(at: now) { cookies.append(cookie) }
        }
        return cookies
    }
}
