import Foundation

// Fuzz targets `set-cookie` (a server's Set-Cookie field for one of a few request URLs) and
// `cookie-jar` (a Netscape cookie file). What is accepted must be writable to a cookie file and
// read back the same; what is refused must not crash.

private let cookieURLs = [
    URL(string: "https://www.example.test/docs/page")!,  // safe: literals
    URL(string: "http://shop.xn--55qx5d.cn/a/b")!,
    URL(string: "http://127.0.0.1:8080/")!,
    URL(string: "https://co.uk/")!,
]

private let fuzzNow = Date(timeIntervalSince1970: 1_800_000_000)

func fuzzSetCookie(_ bytes: UnsafeRawBufferPointer) {
    guard let control = bytes.first else { return }
    let url = cookieURLs[Int(control) % cookieURLs.count]
    let field = String(decoding: bytes.dropFirst(), as: UTF8.self)
    guard let cookie = SetCookieParser.cookie(from: field, for: url, at: fuzzNow) else { return }
    let host = CookieRules.canonicalHost(url.host(percentEncoded: false) ?? "")
    fuzzRequire(!cookie.name.isEmpty)
    fuzzRequire(CookieRules.domainMatches(host: host, domain: cookie.domain), "\(cookie.domain) for \(host)")
    fuzzRequire(cookie.isHostOnly || !PublicSuffixList.isPublicSuffix(cookie.domain, in: .all), "a public suffix")
    fuzzRequire(!cookie.isSecure || url.scheme == "https")
    guard !cookie.isExpired(at: fuzzNow) else { return }
    guard let line = CookieStore.netscapeLine(cookie) else {
        fuzzFail("an accepted cookie cannot be written: \(cookie)")
    }
    let (again, problems) = CookieStore.parseNetscape(line + "\n", source: "fuzz")
    fuzzRequire(problems.isEmpty, "\(problems)")
    guard let read = again.first else { return }  // expired by the wall clock meanwhile
    fuzzRequire(
        read.name == cookie.name && read.value == cookie.value && read.domain == cookie.domain
            && read.path == cookie.path && read.isHostOnly == cookie.isHostOnly && read.isSecure == cookie.isSecure,
        "round trip: \(cookie) became \(read)"
    )
}

func fuzzCookieJar(_ bytes: UnsafeRawBufferPointer) {
    let text = String(decoding: bytes, as: UTF8.self)
    let (cookies, problems) = CookieStore.parseNetscape(text, source: "fuzz")
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).count
    fuzzRequire(problems.allSatisfy { (1...lines).contains($0.line) })
    fuzzRequire(cookies.count + problems.count <= lines)
    for cookie in cookies {
        guard let line = CookieStore.netscapeLine(cookie) else {
            fuzzFail("a loaded cookie cannot be written back: \(cookie)")
        }
        let (again, problems) = CookieStore.parseNetscape(line, source: "fuzz")
        fuzzRequire(problems.isEmpty && again.count <= 1)
        if let read = again.first {
            fuzzRequire(read.name == cookie.name && read.value == cookie.value && read.path == cookie.path)
        }
    }
    let store = CookieStore()
    store.set(contentsOf: cookies)
    fuzzRequire(store.allCookies.count <= CookieStore.maximumTotal)
}
