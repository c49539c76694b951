// Fuzz target `http1-response`: a server's bytes through the HTTP/1.1 response parser (heads,
// Content-Length, chunked framing with extensions and trailers, close-delimited bodies), fed in
// pieces of a size the input chooses. The first byte picks the request method and piece size.

func fuzzHTTP1Response(_ bytes: UnsafeRawBufferPointer) {
    guard let control = bytes.first else { return }
    let methods = ["GET", "HEAD", "POST", "CONNECT"]
    var parser = HTTP1ResponseParser(requestMethod: methods[Int(control & 3)])
    let input = Array(bytes.dropFirst())
    let pieceSize = 1 + Int(control >> 2) * 37
    var bodyBytes = 0
    var informational = 0
    var heads = 0
    var ended = false
    func take(_ events: [HTTP1ResponseParser.Event]) {
        for event in events {
            fuzzRequire(!ended, "an event after the end of the response")
            switch event {
            case .informational(let head):
                fuzzRequire((100..<200).contains(head.status))
                informational += 1
            case .head(let head):
                // 101 Switching Protocols ends the exchange like a final response (no body, no reuse).
                fuzzRequire(head.status == 101 || (200..<1000).contains(head.status), "final status \(head.status)")
                heads += 1
            case .body(let piece):
                fuzzRequire(heads == 1, "body before the head")
                bodyBytes += piece.count
            case .end:
                ended = true
            }
        }
    }
    do {
        var offset = 0
        while offset < input.count, !ended {
            let piece = Array(input[offset..<min(input.count, offset + pieceSize)])
            take(try parser.feed(piece))
            offset += piece.count
        }
        if !ended { take(try parser.endOfInput()) }
    } catch let error as SesameError {
        // Malformed framing, or a connection closed before any response.
        fuzzRequire(error.code == .protocolError || error.code == .connectionClosed, "unexpected error \(error)")
    } catch {
        fuzzFail("not a SesameError: \(error)")
    }
    // De-chunking only removes bytes, and the limits hold.
    fuzzRequire(bodyBytes <= input.count)
    fuzzRequire(heads <= 1 && informational <= HTTP1ParserLimits().maximumInformationalResponses)
}
