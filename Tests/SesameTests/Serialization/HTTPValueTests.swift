import Foundation
import Testing

@testable import Sesame

/// Header removal, and requests and responses keeping value semantics with their URL and body
/// held in boxes (`LayoutBox`).
@Suite struct HTTPValueTests {
    @Test func removingAFieldRemovesEveryCaseAndKeepsTheOthersInOrder() {
        var headers: HTTPHeaders = ["A": "1", "Cookie": "x", "B": "2", "cookie": "y", "C": "3"]
        headers.remove(name: "COOKIE")
        #expect(headers.map(\.name) == ["A", "B", "C"])
        #expect(headers.map(\.value) == ["1", "2", "3"])
    }

    @Test func removingAnAbsentFieldLeavesSharedStorageAlone() {
        let original: HTTPHeaders = ["Host": "example.test", "Accept": "*/*"]
        var copy = original
        copy.remove(name: "Proxy-Authorization")
        // Still the same buffer: removing nothing copied nothing.
        let first = original.fields.withUnsafeBufferPointer { $0.baseAddress }
        let second = copy.fields.withUnsafeBufferPointer { $0.baseAddress }
        #expect(first == second)
        #expect(copy.count == 2)
    }

    @Test func requestsCopyTheirURLAndBodyAsValues() {
        let original = HTTPRequest(url: URL(string: "https://example.test/a")!, body: .data(Data("one".utf8)))
        var changed = original
        changed.url = URL(string: "https://example.test/b")!
        changed.body = nil
        #expect(original.url.path == "/a")
        #expect(original.hasBody)
        if case .data(let data)? = original.body {
            #expect(data == Data("one".utf8))
        } else {
            Issue.record("body lost")
        }
        #expect(changed.url.path == "/b")
        #expect(!changed.hasBody && changed.body == nil)
        changed.body = .data(Data("two".utf8))
        #expect(changed.hasBody)
        if case .data(let data)? = changed.body { #expect(data == Data("two".utf8)) } else { Issue.record("body lost") }
    }

    @Test func aResponseKeepsItsURL() {
        let url = URL(string: "https://example.test/final?q=1")!
        let response = HTTPResponse(status: 200, reason: "OK", headers: [:], url: url)
        #expect(response.url == url)
    }
}
