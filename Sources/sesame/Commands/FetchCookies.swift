import FoundationEssentials
import Sesame

/// curl's `-b/--cookie` (a `name=value; …` string, or a Netscape cookie file to load) and
/// `-c/--cookie-jar` (a file every cookie is written to at the end). Without either, no cookies.
struct FetchCookies {
    let store: CookieStore?
    let literal: String?
    let jar: String?

    init(options: FetchOptions) throws {
        jar = options.cookieJar
        guard options.cookie != nil || options.cookieJar != nil else {
            store = nil
            literal = nil
            return
        }
        let store = CookieStore()
        var literal: String?
        if let cookie = options.cookie {
            if cookie.contains("=") {
                literal = cookie
            } else if FileManager.default.fileExists(atPath: cookie) {
                // As curl: lines that are not cookies are skipped; each is named.
                for problem in try store.load(netscapeFile: URL(fileURLWithPath: cookie)) {
                    Output.error("warning: skipped a line of the cookie file: \(problem)")
                }
            }  // as curl: a file that does not exist yet just turns the cookie engine on
        }
        self.store = store
        self.literal = literal
    }

    /// Writes the jar; a message when that failed.
    func save() -> String? {
        guard let jar, let store else { return nil }
        do {
            try store.save(netscapeFile: URL(fileURLWithPath: jar))
            return nil
        } catch {
            return "\(error)"
        }
    }
}
