import SesameNetworking
import Testing

/// `HTTPCookieStorage.setCookie(_:)` takes what Apple code hands it, but the store's rules still
/// apply: a cookie for a public suffix (either section of the list, in either spelling) would go
/// to every site under it, and is not kept.
@Suite struct CookieStorageRulesTests {
    func cookie(_ domain: String, _ name: String = "session") -> HTTPCookie {
        HTTPCookie(properties: [.name: name, .value: "secret", .domain: domain, .path: "/"])!
    }

    @Test(arguments: [".com", ".co.uk", ".xn--55qx5d.cn", ".公司.cn", ".github.io", ".s3.amazonaws.com"])
    func aPublicSuffixCookieIsNotStored(_ domain: String) {
        let storage = HTTPCookieStorage()
        storage.setCookie(cookie(domain))
        #expect(storage.cookies?.isEmpty == true)
        for site in ["https://victim.com/", "https://victim.co.uk/", "https://victim.github.io/"] {
            #expect(storage.cookies(for: URL(string: site)!)?.isEmpty == true, "sent to \(site)")
        }
    }

    @Test func aSiteCookieIsStoredAndGoesToItsSubdomainsOnly() {
        let storage = HTTPCookieStorage()
        storage.setCookie(cookie(".example.test"))
        #expect(storage.cookies(for: URL(string: "https://www.example.test/")!)?.map { $0.name } == ["session"])
        #expect(storage.cookies(for: URL(string: "https://example.org/")!)?.isEmpty == true)
    }

    @Test func cookiesSetForAURLMustBelongToItsHost() {
        let storage = HTTPCookieStorage()
        let page = URL(string: "https://www.example.test/")!
        storage.setCookies(
            [cookie(".other.test", "foreign"), cookie(".example.test", "own")],
            for: page,
            mainDocumentURL: page
        )
        #expect(storage.cookies?.map { $0.name } == ["own"])
    }
}
