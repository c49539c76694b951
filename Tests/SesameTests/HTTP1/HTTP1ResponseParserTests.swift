import Testing

@testable import Sesame

@Suite struct HTTP1ResponseParserTests {
    /// Feeds `text` in one piece and also byte by byte; both must give the same events.
    func parse(_ text: String, method: String = "GET", close: Bool = false) throws -> [HTTP1ResponseParser.Event] {
        let bytes = Array(text.utf8)
        var whole = HTTP1ResponseParser(requestMethod: method)
        var events = try whole.feed(bytes)
        if close { events += try whole.endOfInput() }

        var split = HTTP1ResponseParser(requestMethod: method)
        var pieces: [HTTP1ResponseParser.Event] = []
        for byte in bytes { pieces += try split.feed([byte]) }
        if close { pieces += try split.endOfInput() }
        #expect(Self.merged(pieces) == Self.merged(events))
        return Self.merged(events)
    }

    /// Joins adjacent body events so different splits compare equal.
    static func merged(_ events: [HTTP1ResponseParser.Event]) -> [HTTP1ResponseParser.Event] {
        var result: [HTTP1ResponseParser.Event] = []
        for event in events {
            if case .body(let more) = event, case .body(let earlier)? = result.last {
                result[result.count - 1] = .body(earlier + more)
            } else if case .body(let bytes) = event, bytes.isEmpty {
                continue
            } else {
                result.append(event)
            }
        }
        return result
    }

    func body(_ events: [HTTP1ResponseParser.Event]) -> String {
        events.compactMap { event -> String? in
            if case .body(let bytes) = event { return String(decoding: bytes, as: UTF8.self) }
            return nil
        }.joined()
    }

    func end(_ events: [HTTP1ResponseParser.Event]) -> (trailers: HTTPHeaders, reusable: Bool)? {
        for case .end(let trailers, let reusable) in events { return (trailers, reusable) }
        return nil
    }

    func head(_ events: [HTTP1ResponseParser.Event]) -> HTTP1ResponseHead? {
        for case .head(let head) in events { return head }
        return nil
    }

    @Test func contentLengthFramesTheBody() throws {
        let events = try parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: 1\r\nx-a: 2\r\n\r\nhello")
        let parsedHead = try #require(head(events))
        #expect(parsedHead.status == 200)
        #expect(parsedHead.reason == "OK")
        #expect(parsedHead.headers.values(for: "X-A") == ["1", "2"])
        #expect(parsedHead.headers["x-a"] == "1, 2")
        #expect(body(events) == "hello")
        #expect(end(events)?.reusable == true)
    }

    @Test func theBytesAContentLengthStillAnnouncesAreKnownOnlyForThatFraming() throws {
        var parser = HTTP1ResponseParser(requestMethod: "GET")
        _ = try parser.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".utf8))
        #expect(parser.fixedBodyRemaining == 7)
        _ = try parser.feed(Array("defghij".utf8))
        #expect(parser.fixedBodyRemaining == nil)
        #expect(parser.isComplete)
        var head = HTTP1ResponseParser(requestMethod: "HEAD")
        _ = try head.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n".utf8))
        #expect(head.fixedBodyRemaining == nil)
        var chunked = HTTP1ResponseParser(requestMethod: "GET")
        _ = try chunked.feed(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".utf8))
        #expect(chunked.fixedBodyRemaining == nil)
    }

    @Test func chunkedBodiesWithExtensionsAndTrailers() throws {
        let text =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
            + "5;name=value\r\nhello\r\n1 ; ext\r\n \r\n6\r\nworld!\r\n0\r\nDigest: sha-256=abc\r\nX-T: 1\r\n\r\n"
        let events = try parse(text)
        #expect(body(events) == "hello world!")
        let ending = try #require(end(events))
        #expect(ending.trailers["digest"] == "sha-256=abc")
        #expect(ending.trailers.count == 2)
        #expect(ending.reusable)
    }

    @Test func bareLFLineEndingsAreAccepted() throws {
        let events = try parse("HTTP/1.1 200 OK\nContent-Length: 2\n\nok")
        #expect(body(events) == "ok")
    }

    @Test func aBodyUntilCloseEndsWithTheConnection() throws {
        let events = try parse("HTTP/1.1 200 OK\r\n\r\nall of it", close: true)
        #expect(body(events) == "all of it")
        #expect(end(events)?.reusable == false)
    }

    @Test(arguments: [("HEAD", 200), ("GET", 204), ("GET", 304)])
    func responsesWithoutABody(method: String, status: Int) throws {
        let events = try parse("HTTP/1.1 \(status) X\r\nContent-Length: 10\r\n\r\n", method: method)
        #expect(head(events)?.status == status)
        #expect(body(events) == "")
        #expect(end(events)?.reusable == true)
    }

    @Test func informationalResponsesComeFirst() throws {
        let text =
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a>; rel=preload\r\n\r\n"
            + "HTTP/1.1 201 Created\r\nContent-Length: 0\r\n\r\n"
        let events = try parse(text)
        #expect(events.count == 4)
        guard case .informational(let first) = events[0], case .informational(let second) = events[1] else {
            Issue.record("expected two informational heads")
            return
        }
        #expect(first.status == 100)
        #expect(second.headers["link"] == "</a>; rel=preload")
        #expect(head(events)?.status == 201)
    }

    @Test func connectionReuseFollowsVersionAndConnectionHeader() throws {
        #expect(end(try parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"))?.reusable == false)
        #expect(end(try parse("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"))?.reusable == false)
        #expect(
            end(try parse("HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"))?.reusable == true
        )
    }

    @Test func transferCodingsAreListsOfCaseInsensitiveTokens() throws {
        // Chunked last, in any case and spacing, frames the body; anything else after it runs to the close.
        let chunked = try parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip ,\t Chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n")
        #expect(body(chunked) == "ok")
        #expect(end(chunked)?.reusable == true)
        let untilClose = try parse("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\nraw", close: true)
        #expect(body(untilClose) == "raw")
        #expect(end(untilClose)?.reusable == false)
    }

    @Test func transferEncodingWinsOverContentLengthAndForbidsReuse() throws {
        let events = try parse(
            "HTTP/1.1 200 OK\r\nContent-Length: 100\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"
        )
        #expect(body(events) == "ok")
        #expect(end(events)?.reusable == false)
    }

    @Test func identicalRepeatedContentLengthsAreOneLength() throws {
        let events = try parse("HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\nContent-Length: 2\r\n\r\nok")
        #expect(body(events) == "ok")
    }

    @Test func excessBytesAfterAResponseKeepTheResponseButNotTheConnection() throws {
        var parser = HTTP1ResponseParser(requestMethod: "GET")
        let events = try parser.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA".utf8))
        #expect(body(events) == "ok")
        #expect(end(events)?.reusable == false)
        let later = #expect(throws: SesameError.self) { _ = try parser.feed(Array("more".utf8)) }
        #expect(later?.detail.contains("after the end of the response") == true)
    }

    @Test func obsFoldIsReplacedWithASpace() throws {
        let events = try parse("HTTP/1.1 200 OK\r\nX-Long: one\r\n  two\r\nContent-Length: 0\r\n\r\n")
        #expect(head(events)?.headers["x-long"] == "one two")
    }

    @Test func anEmptyReasonPhraseIsFine() throws {
        #expect(head(try parse("HTTP/1.1 404\r\nContent-Length: 0\r\n\r\n"))?.status == 404)
        #expect(head(try parse("HTTP/1.1 404 \r\nContent-Length: 0\r\n\r\n"))?.reason == "")
    }

    /// Hostile and broken responses: each is a protocol error that says what was wrong.
    @Test(arguments: [
        ("garbage\r\n\r\n", "malformed status line"),
        ("HTTP/1.1 20 OK\r\n\r\n", "malformed status line"),
        ("HTTP/1.1 2000 OK\r\n\r\n", "malformed status line"),
        ("HTTP/2 200\r\n\r\n", "HTTP/2"),
        ("HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n", "without a colon"),
        ("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "invalid header name"),
        ("HTTP/1.1 200 OK\r\nName : x\r\n\r\n", "whitespace between"),
        ("HTTP/1.1 200 OK\r\nContent-Length: abc\r\n\r\n", "is not a number"),
        ("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "is not a number"),
        ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n", "conflicting Content-Length"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", "not hexadecimal"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n11111111111111111\r\n", "too large"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n", "longer than its declared size"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, chunked\r\n\r\n", "more than once"),
        ("HTTP/1.1 200 OK\r\nTransfer-Encoding: Chunked\r\nTransfer-Encoding: ,CHUNKED\r\n\r\n", "more than once"),
        ("HTTP/1.1 200 OK\r\nX: a\rb\r\n\r\n", "bare CR"),
        ("HTTP/1.1 200 OK\r\n fold-first: x\r\n\r\n", "continuation line"),
    ])
    func malformedResponsesAreNamed(text: String, expected: String) throws {
        var parser = HTTP1ResponseParser(requestMethod: "GET")
        let error = #expect(throws: SesameError.self) { _ = try parser.feed(Array(text.utf8)) }
        #expect(error?.code == .protocolError)
        #expect(error?.detail.contains(expected) == true, "\(String(describing: error))")
    }

    @Test func limitsBoundLinesHeadsFieldsAndInterimResponses() throws {
        var parser = HTTP1ResponseParser(requestMethod: "GET")
        let longLine = "HTTP/1.1 200 OK\r\nX: " + String(repeating: "a", count: 9_000)
        let lineError = #expect(throws: SesameError.self) { _ = try parser.feed(Array(longLine.utf8)) }
        #expect(lineError?.detail.contains("longer than 8192 bytes") == true)

        var fields = HTTP1ResponseParser(requestMethod: "GET")
        let many = "HTTP/1.1 200 OK\r\n" + (0..<200).map { "X-\($0): y\r\n" }.joined()
        let fieldError = #expect(throws: SesameError.self) { _ = try fields.feed(Array(many.utf8)) }
        #expect(fieldError?.detail.contains("more than 128 header fields") == true)

        var head = HTTP1ResponseParser(requestMethod: "GET")
        let big =
            "HTTP/1.1 200 OK\r\n" + (0..<100).map { "X-\($0): \(String(repeating: "v", count: 700))\r\n" }.joined()
        let headError = #expect(throws: SesameError.self) { _ = try head.feed(Array(big.utf8)) }
        #expect(headError?.detail.contains("larger than 65536 bytes") == true)

        var interim = HTTP1ResponseParser(requestMethod: "GET")
        let continues = String(repeating: "HTTP/1.1 100 Continue\r\n\r\n", count: 20)
        let interimError = #expect(throws: SesameError.self) { _ = try interim.feed(Array(continues.utf8)) }
        #expect(interimError?.detail.contains("1xx") == true)
    }

    @Test func truncationIsAnErrorThatSaysWhere() throws {
        var fixed = HTTP1ResponseParser(requestMethod: "GET")
        _ = try fixed.feed(Array("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc".utf8))
        let fixedError = #expect(throws: SesameError.self) { _ = try fixed.endOfInput() }
        #expect(fixedError?.detail.contains("7 body bytes still to come") == true)

        var chunked = HTTP1ResponseParser(requestMethod: "GET")
        _ = try chunked.feed(Array("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab".utf8))
        let chunkedError = #expect(throws: SesameError.self) { _ = try chunked.endOfInput() }
        #expect(chunkedError?.detail.contains("middle of a chunked body") == true)

        var headless = HTTP1ResponseParser(requestMethod: "GET")
        _ = try headless.feed(Array("HTTP/1.1 200 OK\r\nX: y".utf8))
        let headError = #expect(throws: SesameError.self) { _ = try headless.endOfInput() }
        #expect(headError?.detail.contains("before the response head was complete") == true)

        var nothing = HTTP1ResponseParser(requestMethod: "GET")
        let closed = #expect(throws: SesameError.self) { _ = try nothing.endOfInput() }
        #expect(closed?.code == .connectionClosed)
    }

    /// RFC 9112 section 6.3's rule on its own: how each head frames its body, and when the
    /// connection may carry another exchange.
    @Test func theFramingRuleDecidesTheBodyAndTheConnectionsReuse() throws {
        typealias Framing = HTTP1ResponseParser.BodyFraming
        func framing(
            _ fields: [(String, String)],
            status: Int = 200,
            minor: Int = 1,
            method: String = "GET"
        ) throws -> (Framing, Bool) {
            let head = HTTP1ResponseHead(minorVersion: minor, status: status, reason: "", headers: HTTPHeaders(fields))
            let (framing, reusable) = try HTTP1ResponseParser.framing(
                of: head,
                isHeadRequest: method == "HEAD",
                isConnectRequest: method == "CONNECT"
            )
            return (framing, reusable)
        }
        #expect(try framing([("Content-Length", "12")]) == (.fixed(12), true))
        #expect(try framing([("Content-Length", "12, 12")]) == (.fixed(12), true))
        #expect(try framing([("Content-Length", "12"), ("Connection", "close")]) == (.fixed(12), false))
        #expect(try framing([("Content-Length", "12")], minor: 0) == (.fixed(12), false))
        #expect(try framing([("Content-Length", "12"), ("Connection", "keep-alive")], minor: 0) == (.fixed(12), true))
        #expect(try framing([("Transfer-Encoding", "gzip, chunked")]) == (.chunked, true))
        #expect(try framing([("Transfer-Encoding", "chunked"), ("Content-Length", "5")]) == (.chunked, false))
        #expect(try framing([("Transfer-Encoding", "gzip")]) == (.untilClose, false))
        #expect(try framing([]) == (.untilClose, false))
        #expect(try framing([("Content-Length", "12")], method: "HEAD") == (.none, true))
        #expect(try framing([], status: 304) == (.none, true))
        #expect(try framing([], status: 101) == (.none, false))
        #expect(try framing([("Content-Length", "12")], method: "CONNECT") == (.tunnel, false))
        #expect(try framing([("Content-Length", "12")], status: 407, method: "CONNECT") == (.fixed(12), true))
        #expect(throws: SesameError.self) { try framing([("Transfer-Encoding", "chunked, chunked")]) }
        #expect(throws: SesameError.self) { try framing([("Content-Length", "12, 13")]) }
        #expect(throws: SesameError.self) { try framing([("Content-Length", "-1")]) }
    }
}
