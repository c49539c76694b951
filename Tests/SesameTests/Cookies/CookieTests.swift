import Foundation
import SesameTesting
import Testing

@testable import Sesame

@Suite struct CookieTests {
    let url = URL(string: "https://www.example.test/docs/page")!  // safe: literal

    func cookie(_ field: String, for url: URL? = nil) -> Cookie? {
        SetCookieParser.cookie(from: field, for: url ?? self.url)
    }

    @Test func attributesAreReadAsRFC6265Says() throws {
        let plain = try #require(cookie("id=a3fWa; Path=/; Secure; HttpOnly; SameSite=Lax"))
        #expect(plain.domain == "www.example.test" && plain.isHostOnly && plain.path == "/")
        #expect(plain.isSecure && plain.isHTTPOnly && plain.sameSite == "Lax")
        #expect(plain.expires == nil)
        #expect(cookie("a=1")?.path == "/docs", "the default path is the request's directory")
        let domain = try #require(cookie("a=1; Domain=.Example.TEST"))
        #expect(domain.domain == "example.test" && !domain.isHostOnly)
        let expires = try #require(cookie("a=1; Expires=Wed, 21 Oct 2035 07:28:00 GMT"))
        // Stored expiry is capped at 400 days (RFC 6265bis); the parsed date is exact.
        #expect(abs((expires.expires ?? .distantPast).timeIntervalSinceNow - 400 * 86_400) < 5)
        #expect(CookieDate.parse("Wed, 21 Oct 2035 07:28:00 GMT") == Date(timeIntervalSince1970: 2_076_564_480))
        #expect(CookieDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == Date(timeIntervalSince1970: 784_111_777))
        #expect(CookieDate.parse("31 Feb 2030 00:00:00") == nil)
        #expect(CookieDate.parse("not a date") == nil)
        let maxAge = try #require(cookie("a=1; Max-Age=60; Expires=Wed, 21 Oct 2035 07:28:00 GMT"))
        #expect(abs((maxAge.expires ?? .distantPast).timeIntervalSinceNow - 60) < 5, "Max-Age wins over Expires")
        #expect(cookie("a=1; Max-Age=0")?.isExpired() == true)
        #expect(cookie("a=1; Max-Age=1x")?.expires == nil, "a malformed Max-Age is ignored")
    }

    @Test func cookiesForOtherSitesAndPublicSuffixesAreRefused() {
        #expect(cookie("a=1; Domain=other.test") == nil)
        #expect(cookie("a=1; Domain=badexample.test") == nil)
        #expect(cookie("a=1; Domain=sub.www.example.test") == nil, "a subdomain of the host is not the host's to set")
        let suffix = URL(string: "https://shop.co.uk/")!  // safe: literal
        #expect(cookie("a=1; Domain=co.uk", for: suffix) == nil)
        #expect(cookie("a=1; Domain=co.uk", for: URL(string: "https://co.uk/")!)?.isHostOnly == true)  // safe: literal
        #expect(cookie("a=1; Secure", for: URL(string: "http://www.example.test/")!) == nil)  // safe: literal
        #expect(cookie("noequals") == nil)
        #expect(cookie("=1") == nil)
        #expect(cookie("a=\u{1}") == nil)
        #expect(cookie("a=" + String(repeating: "x", count: 5_000)) == nil)
        let ip = URL(string: "http://127.0.0.1:8080/")!  // safe: literal
        #expect(cookie("a=1; Domain=0.0.1", for: ip) == nil)
    }

    @Test func theStoreMatchesHostsPathsAndSchemes() {
        let store = CookieStore()
        store.store(
            setCookieFields: ["host=1; Path=/", "dom=2; Domain=example.test; Path=/", "sec=3; Secure; Path=/"],
            for: url
        )
        store.store(setCookieFields: ["docs=4; Path=/docs"], for: url)
        func names(_ text: String) -> [String] {
            store.cookies(for: URL(string: text)!).map(\.name)  // safe: test literals
        }
        #expect(names("https://www.example.test/docs/x") == ["docs", "dom", "host", "sec"])
        #expect(names("http://www.example.test/") == ["dom", "host"], "Secure cookies only over https")
        #expect(names("https://example.test/") == ["dom"], "host-only cookies stay on their host")
        #expect(names("https://a.www.example.test/") == ["dom"])
        #expect(names("https://www.example.test/docsx") == ["dom", "host", "sec"], "/docs does not cover /docsx")
        #expect(names("https://badexample.test/").isEmpty)
        #expect(
            store.cookieHeader(for: URL(string: "https://www.example.test/docs")!) == "docs=4; dom=2; host=1; sec=3"
        )  // safe: literal
        store.store(setCookieFields: ["dom=gone; Domain=example.test; Path=/; Max-Age=0"], for: url)
        #expect(names("https://example.test/").isEmpty, "Max-Age=0 deletes")
        store.store(setCookieFields: ["host=updated; Path=/"], for: url)
        #expect(store.cookies(for: url).first { $0.name == "host" }?.value == "updated")
    }

    @Test func aDomainKeepsItsFiftyNewestCookies() {
        let store = CookieStore()
        for index in 0..<60 { store.store(setCookieFields: ["c\(index)=\(index); Path=/"], for: url) }
        let kept = store.cookies(for: url).map(\.name)
        #expect(kept.count == CookieStore.maximumPerDomain)
        #expect(!kept.contains("c0") && kept.contains("c59"))
    }

    @Test func netscapeFilesRoundTrip() throws {
        let store = CookieStore()
        store.store(
            setCookieFields: ["a=1; Domain=example.test; Path=/; Secure; Max-Age=3600", "b=2; HttpOnly", "c=3"],
            for: url
        )
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("jar-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: file) }
        try store.save(netscapeFile: file)
        let text = try String(contentsOf: file, encoding: .utf8)
        #expect(text.hasPrefix("# Netscape HTTP Cookie File"))
        #expect(text.contains(".example.test\tTRUE\t/\tTRUE\t"))
        #expect(text.contains("#HttpOnly_www.example.test\tFALSE\t/docs\tFALSE\t0\tb\t2"))
        let loaded = CookieStore()
        try loaded.load(netscapeFile: file)
        #expect(Set(loaded.allCookies.map(\.name)) == ["a", "b", "c"])
        #expect(loaded.cookieHeader(for: URL(string: "https://www.example.test/docs/")!) != nil)  // safe: literal
        let broken = FileManager.default.temporaryDirectory.appendingPathComponent("broken-\(UUID().uuidString).txt")
        defer { try? FileManager.default.removeItem(at: broken) }
        // As curl: a line that is not a cookie is skipped and named; the others are kept.
        try Data("example.test\tTRUE\t/\nexample.test\tFALSE\t/\tFALSE\t0\tkept\tyes\n".utf8).write(to: broken)
        let partial = CookieStore()
        let problems = try partial.load(netscapeFile: broken)
        #expect(problems.map(\.line) == [1])
        #expect(problems.first?.description.hasPrefix("\(broken.path):1: expected 7") == true)
        #expect(partial.allCookies.map(\.name) == ["kept"])
        let missing = #expect(throws: SesameError.self) {
            try CookieStore().load(netscapeFile: broken.appendingPathExtension("missing"))
        }
        #expect(missing?.code == .fileUnreadable)
    }

    @Test func aServerCannotPutAFieldSeparatorIntoTheJar() throws {
        #expect(cookie("a=x\ty") == nil, "a tab inside a value")
        #expect(cookie("a\tb=1") == nil, "a tab inside a name")
        #expect(cookie("a=1; Path=/x\ty")?.path == "/docs", "a path with a tab is ignored")
        #expect(cookie("a=1\r\nSet-Cookie: b=2") == nil)
        #expect(cookie("a=1;\tPath=/")?.path == "/", "a tab as white space between attributes is fine")
        // A cookie stored through the API with a control character is left out of the file.
        let store = CookieStore()
        store.set(Cookie(name: "bad", value: "x\ty", domain: "example.test"))
        store.set(Cookie(name: "good", value: "1", domain: "example.test"))
        let file = try ScratchFolder.make("jar").appendingPathComponent("jar.txt")
        try store.save(netscapeFile: file)
        let loaded = CookieStore()
        #expect(try loaded.load(netscapeFile: file).isEmpty)
        #expect(loaded.allCookies.map(\.name) == ["good"])
    }

    @Test func aLineWithAControlCharacterIsSkipped() throws {
        let (cookies, problems) = CookieStore.parseNetscape(
            "example.test\tFALSE\t/\tFALSE\t0\ta\tone\u{1}\nexample.test\tFALSE\t/\tFALSE\t0\tb\t2\n",
            source: "jar"
        )
        #expect(cookies.map(\.name) == ["b"])
        #expect(problems.map(\.description) == ["jar:1: a field holds a control character"])
    }

    @Test func aPublicSuffixIsRefusedInEitherForm() throws {
        // 公司.cn is in the list in Unicode; servers write it as an A-label.
        #expect(Punycode.asciiDomain("公司.cn") == "xn--55qx5d.cn")
        #expect(Punycode.asciiDomain("Bücher.Example") == "xn--bcher-kva.example")  // RFC 3492's sample
        #expect(Punycode.asciiDomain("例え.テスト") == "xn--r8jz45g.xn--zckzah")
        #expect(PublicSuffixList.isPublicSuffix("xn--55qx5d.cn", in: .all))
        #expect(PublicSuffixList.isPublicSuffix("公司.cn", in: .icann))
        #expect(!PublicSuffixList.isPublicSuffix("example.xn--55qx5d.cn", in: .all))
        let site = URL(string: "https://shop.xn--55qx5d.cn/")!  // safe: literal
        #expect(cookie("a=1; Domain=xn--55qx5d.cn", for: site) == nil)
        #expect(cookie("a=1; Domain=公司.cn", for: site) == nil)
        #expect(cookie("a=1; Domain=shop.xn--55qx5d.cn", for: site)?.isHostOnly == false)
    }

    /// The list's two sections are kept apart: cookie scope consults both (a `github.io` cookie
    /// would go to every GitHub Pages site), wildcard certificates the ICANN section only (BR
    /// §3.2.2.6: `*.s3.amazonaws.com` is what Amazon's own certificate names).
    @Test func thePrivateSectionCountsForCookiesAndNotForWildcards() {
        #expect(PublicSuffixList.isPublicSuffix("github.io", in: .all))
        #expect(!PublicSuffixList.isPublicSuffix("github.io", in: .icann))
        #expect(PublicSuffixList.isPublicSuffix("s3.amazonaws.com", in: .all))
        #expect(!PublicSuffixList.isPublicSuffix("s3.amazonaws.com", in: .icann))
        #expect(PublicSuffixList.isPublicSuffix("co.uk", in: .icann))
        #expect(!PublicSuffixList.isPublicSuffix("example.co.uk", in: .all))
        // Sections parsed from text: a PRIVATE rule never decides an ICANN question.
        let rules = PublicSuffixList.parse(
            Array(
                "// ===BEGIN ICANN DOMAINS===\nuk\nco.uk\n*.ck\n!www.ck\n// ===END ICANN DOMAINS===\n// ===BEGIN PRIVATE DOMAINS===\nblogspot.co.uk\n// ===END PRIVATE DOMAINS===\n"
                    .utf8
            )
        )
        #expect(rules.icann.contains("co.uk") && !rules.icann.contains("blogspot.co.uk"))
        #expect(rules.private.contains("blogspot.co.uk") && !rules.private.contains("co.uk"))
        #expect(rules.icann.contains("anything.ck") && !rules.icann.contains("www.ck"))
    }

    /// Cookies set through an API pass the rules `Set-Cookie` passes: nothing reaches the store
    /// that would go to sites that did not set it.
    @Test(arguments: [
        ("com", false, "public suffix"), ("co.uk", false, "public suffix"), ("xn--55qx5d.cn", false, "public suffix"),
        ("公司.cn", false, "public suffix"), ("github.io", false, "public suffix"), ("127.0.0.1", false, "IP address"),
        ("", true, "not a host name"),
    ])
    func aCookieTheRulesRefuseIsNotStored(domain: String, hostOnly: Bool, says: String) {
        let store = CookieStore()
        let cookie = Cookie(name: "leak", value: "1", domain: domain, isHostOnly: hostOnly)
        #expect(store.refusal(of: cookie)?.contains(says) == true, "\(String(describing: store.refusal(of: cookie)))")
        #expect(!store.set(cookie))
        #expect(store.allCookies.isEmpty)
        #expect(store.cookies(for: URL(string: "https://victim.github.io/")!).isEmpty)  // safe: literal
    }

    @Test func aCookieSetForAPageMustBelongToItsHost() {
        let store = CookieStore()
        let page = URL(string: "http://www.example.test/")!  // safe: literal
        #expect(!store.set(Cookie(name: "a", value: "1", domain: "other.test", isHostOnly: false), from: page))
        #expect(!store.set(Cookie(name: "b", value: "1", domain: "example.test", isSecure: true), from: page))
        #expect(store.set(Cookie(name: "c", value: "1", domain: "example.test", isHostOnly: false), from: page))
        #expect(store.set(Cookie(name: "d", value: "1", domain: "WWW.Example.TEST"), from: page))
        #expect(store.cookies(for: page).map(\.name).sorted() == ["c", "d"])
        #expect(!store.set(Cookie(name: "e\u{7}", value: "1", domain: "example.test")), "a control character")
        #expect(!store.set(Cookie(name: "f", value: String(repeating: "x", count: 5_000), domain: "example.test")))
    }

    @Test func aCookieFileCannotPlantAPublicSuffixCookie() {
        let (cookies, problems) = CookieStore.parseNetscape(
            ".github.io\tTRUE\t/\tFALSE\t0\tleak\t1\nsite.github.io\tFALSE\t/\tFALSE\t0\tkept\t1\n",
            source: "jar"
        )
        #expect(cookies.map(\.name) == ["kept"])
        #expect(
            problems.map(\.description) == [
                "jar:1: refused: its domain 'github.io' is a public suffix: it would go to every site under it"
            ]
        )
    }

    @Test func aDomainWithAnEmptyLabelIsAProblemAndEveryLoadedCookieReadsBackAsItself() {
        let text = [
            "...\tFALSE\t/\tFALSE\t0\tdots\t1", "a..example.test\tTRUE\t/\tFALSE\t0\tgap\t1",
            "..example.test\tTRUE\t/\tFALSE\t0\ttwo\t1", "example.test.\tFALSE\t/\tFALSE\t0\tkept\t1",
            // Found by the fuzzer: one trailing dot is the root's, a second an empty label; a
            // space or a comma is in no host name.
            " Nww,..\tTRUE\t/\tTRUE\t4000000000\tx", "example.test..\tTRUE\t/\tFALSE\t0\ttrailing\t1",
            "my_host.example.test\tFALSE\t/\tFALSE\t0\tunderscore\t1",
        ].joined(separator: "\n")
        let (cookies, problems) = CookieStore.parseNetscape(text, source: "jar")
        #expect(cookies.map(\.name) == ["kept", "underscore"])
        #expect(problems.map(\.line) == [1, 2, 3, 5, 6])
        for cookie in cookies {
            let line = CookieStore.netscapeLine(cookie) ?? ""
            let (again, more) = CookieStore.parseNetscape(line, source: "again")
            #expect(more.isEmpty && again.first?.domain == cookie.domain)
        }
    }

    @Test func aLargeCookieFileLoadsInOnePass() throws {
        // 20,000 lines over 2,000 domains: every line is read, the store keeps its bounds. (Kept
        // small: a synchronous test holds one of the few concurrency threads while it runs.)
        let lines = (0..<20_000).map { "site\($0 % 2_000).test\tFALSE\t/\tFALSE\t0\tc\($0)\tv" }
        let text = "# Netscape HTTP Cookie File\n" + lines.joined(separator: "\n") + "\n"
        let file = try ScratchFolder.make("jar").appendingPathComponent("big.txt")
        try Data(text.utf8).write(to: file)
        let store = CookieStore()
        #expect(try store.load(netscapeFile: file).isEmpty)
        #expect(store.allCookies.count == CookieStore.maximumTotal)
        let site = URL(string: "http://site7.test/")!  // safe: literal
        #expect(store.cookies(for: site).count <= CookieStore.maximumPerDomain)
    }

    @Test func sessionsKeepAndSendCookiesButNeverToAnotherHost() async throws {
        var server = LocalServer.Configuration.plainHTTP
        server.handler = { request in
            if request.target == "/login" {
                return .text(
                    "ok",
                    headers: [("Set-Cookie", "session=abc; Path=/; HttpOnly"), ("Set-Cookie", "theme=dark")]
                )
            }
            return .text("cookie=\(request.headers["Cookie"] ?? "none")")
        }
        let origin = try LocalServer(server)
        defer { origin.shutdown() }
        var configuration = SessionConfiguration.default
        configuration.cookieStore = CookieStore()
        configuration.proxy = .none
        let session = Session(configuration: configuration)
        let base = "http://localhost:\(origin.port)"
        _ = try await session.data(from: URL(string: base + "/login")!)
        let (same, _) = try await session.data(from: URL(string: base + "/me")!)
        #expect(String(decoding: same, as: UTF8.self) == "cookie=session=abc; theme=dark")
        let (other, _) = try await session.data(from: URL(string: "http://127.0.0.1:\(origin.port)/me")!)
        #expect(String(decoding: other, as: UTF8.self) == "cookie=none", "127.0.0.1 is another host than localhost")
        var optOut = HTTPRequest(url: URL(string: base + "/me")!)
        optOut.handlesCookies = false
        let (none, _) = try await session.data(for: optOut)
        #expect(String(decoding: none, as: UTF8.self) == "cookie=none")
    }
}
