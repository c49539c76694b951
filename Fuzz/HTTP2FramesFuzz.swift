// Fuzz target `http2-frames`: what an HTTP/2 server sends, to a client session with three open
// streams (two GETs and a POST whose body waits for the window). The first byte is a control
// byte: the input is fed in pieces of (control + 1) bytes. Whatever arrives, the session either
// reports events for the streams it has or fails with an error; the header blocks it keeps stay
// within its limit, and consuming what came and sending what it owes never fails on its own.

func fuzzHTTP2Frames(_ bytes: UnsafeRawBufferPointer) {
    guard let control = bytes.first, let session = try? HTTP2Session() else { return }
    var fields = HTTPHeaders()
    fields.add(name: "accept", value: "*/*")
    var streams: [Int32] = []
    for (method, body) in [("GET", false), ("GET", false), ("POST", true)] {
        guard
            let stream = try? session.submitRequest(
                method: method,
                scheme: "https",
                authority: "fuzz.example",
                path: "/",
                fields: fields,
                hasBody: body
            )
        else { fuzzFail("a fresh session refused a request") }
        streams.append(stream)
    }
    session.sendBody([UInt8](repeating: 0x61, count: 100_000), on: streams[2], end: true)
    var output: [UInt8] = []
    guard (try? session.drainOutput(into: &output)) != nil else { fuzzFail("a fresh session cannot send") }
    let piece = Int(control) + 1
    var offset = 1
    while offset < bytes.count {
        let end = min(bytes.count, offset + piece)
        let events: [HTTP2Session.Event]
        do {
            events = try session.receive(UnsafeRawBufferPointer(rebasing: bytes[offset..<end]))
        } catch {
            return  // a broken protocol ends the session: an error, never a crash
        }
        for event in events {
            switch event {
            case .data(let stream, let data):
                fuzzRequire(streams.contains(stream), "data for stream \(stream), never opened")
                session.consumed(data.count, on: stream)
            case .head(let stream, _, _), .trailers(let stream, _), .end(let stream):
                fuzzRequire(streams.contains(stream), "an event for stream \(stream), never opened")
            case .refused(let stream, _):
                fuzzRequire(streams.contains(stream), "a refusal of stream \(stream), never opened")
            case .reset, .goAway, .settings, .pingAcknowledged:
                break
            }
        }
        for (_, block) in session.incomingHeaders {
            fuzzRequire(block.bytes <= session.limits.maxHeaderListSize, "a header block past the limit was kept")
        }
        output.removeAll(keepingCapacity: true)
        guard (try? session.drainOutput(into: &output)) != nil else { return }
        offset = end
    }
}
