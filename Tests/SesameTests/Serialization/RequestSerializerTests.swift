import Foundation
import Testing

@testable import Sesame

@Suite struct RequestSerializerTests {
    let url = URL(string: "https://api.example.test/search?x=1")!  // safe: literal

    @Test func queriesFollowAFNetworkingsNestingRules() throws {
        let serializer = HTTPRequestSerializer()
        let query = try serializer.queryString([
            "b": "2 3", "a": ["z": 1, "y": [true, false]], "list": ["x", "y"], "none": nil, "sym": "a&b=c/d?e",
        ])
        #expect(
            query
                == "a%5By%5D%5B%5D=1&a%5By%5D%5B%5D=0&a%5Bz%5D=1&b=2%203&list%5B%5D=x&list%5B%5D=y&none&sym=a%26b%3Dc/d?e"
        )
    }

    @Test func getPutsParametersInTheQueryAndPostInAFormBody() throws {
        var serializer = HTTPRequestSerializer()
        serializer.stringEncoding = .gb18030
        let get = try serializer.request(method: "get", url: url, parameters: ["q": "中文"])
        #expect(get.method == "GET")
        #expect(get.url.absoluteString == "https://api.example.test/search?x=1&q=%D6%D0%CE%C4")
        #expect(get.body == nil)
        let post = try serializer.request(method: "POST", url: url, parameters: ["q": "中文", "n": 7])
        #expect(post.url == url)
        #expect(post.headers["Content-Type"] == "application/x-www-form-urlencoded; charset=gb18030")
        guard case .data(let body)? = post.body else {
            Issue.record("expected a data body")
            return
        }
        #expect(String(decoding: body, as: UTF8.self) == "n=7&q=%D6%D0%CE%C4")
    }

    @Test func defaultsTimeoutsCachePolicyCookiesAndAuthorizationApply() throws {
        var serializer = HTTPRequestSerializer()
        serializer.timeout = .seconds(240)
        serializer.cachePolicy = .reloadIgnoringLocalCacheData
        serializer.handlesCookies = false
        try serializer.setAuthorization(user: "ada", password: "s3cret")
        let request = try serializer.request(method: "DELETE", url: url, parameters: nil)
        #expect(request.timeout == .seconds(240))
        #expect(request.headers["Cache-Control"] == "no-cache")
        #expect(!request.handlesCookies)
        #expect(request.headers["Authorization"] == "Basic YWRhOnMzY3JldA==")
        #expect(request.headers["Accept-Language"] != nil)
        #expect(request.headers["User-Agent"]?.contains("Sesame/") == true)
        #expect(throws: SesameError.self) { try serializer.setAuthorization(user: "a:b", password: "c") }
        #expect(
            HTTPRequestSerializer.acceptLanguage(["zh-Hans-CN", "en-US", "fr"]) == "zh-Hans-CN, en-US;q=0.9, fr;q=0.8"
        )
    }

    @Test func jsonBodiesHaveSortedKeys() throws {
        let request = try JSONRequestSerializer().request(
            method: "POST",
            url: url,
            parameters: ["b": [1, 2.5, true, nil], "a": "中"]
        )
        #expect(request.headers["Content-Type"] == "application/json")
        guard case .data(let body)? = request.body else {
            Issue.record("expected a data body")
            return
        }
        #expect(String(decoding: body, as: UTF8.self) == #"{"a":"中","b":[1,2.5,true,null]}"#)
        let get = try JSONRequestSerializer().request(method: "GET", url: url, parameters: ["a": 1])
        #expect(get.url.query == "x=1&a=1")
    }

    @Test func unencodableParametersAreRefused() {
        var serializer = HTTPRequestSerializer()
        serializer.stringEncoding = .isoLatin1
        let error = #expect(throws: SesameError.self) {
            try serializer.request(method: "POST", url: url, parameters: ["name": "中"])
        }
        #expect(error?.code == .textEncodingFailed)
    }
}
