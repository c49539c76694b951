import Foundation
import Testing

@testable import Sesame

@Suite struct URLPartsCacheTests {
    @Test func eachURLGetsItsOwnPartsAndRepeatsAnswerTheSame() throws {
        let cache = URLPartsCache()
        let first = try #require(URL(string: "https://Example.COM/a%20b?q=1"))
        let second = try #require(URL(string: "http://127.0.0.1:8080/"))
        for url in [first, first, second, first] {
            let parts = cache.parts(of: url)
            #expect(parts.origin == Origin(url))
            #expect(parts.target == RequestHead.target(of: url))
        }
        #expect(cache.parts(of: first).origin?.host == "example.com")
        #expect(cache.parts(of: first).target == "/a%20b?q=1")
        #expect(cache.parts(of: try #require(URL(string: "ftp://example.com/"))).origin == nil)
    }
}
