/// One response as the layer above reads it, whichever protocol carries it: the final head, then
/// the body a piece at a time. HTTP/1.1 reads it off a leased connection
/// (``ResponseBodyReader``), HTTP/2 off one stream of a shared connection (`HTTP2ResponseReader`).
/// Used by one task at a time.
protocol ResponseReader: AnyObject {
    /// The final response head, once it arrived.
    var response: HTTPResponse? { get }
    /// How many bytes ``next()`` still delivers, when the framing says and the body is not
    /// decoded; nil otherwise.
    var bodyLength: Int? { get }
    /// The next piece of the (decoded) body, or nil at its end.
    func next() async throws -> [UInt8]?
    /// The trailer fields, once ``next()`` returned nil (empty before then, and when none came).
    var trailers: HTTPHeaders { get }
    /// Gives up on the response: what carried it is not used for it again.
    func abandon()
    /// The TLS of the connection the response came on (nil without TLS): what an answer to its
    /// challenge is bound to.
    var tlsInfo: TLSConnectionInfo? { get }
    /// The HTTP/1.1 connection the response came on, which a multi-leg authentication exchange
    /// continues on (nil over HTTP/2, whose connection is shared).
    var exclusiveConnection: Connection? { get }
    /// The connection carries no other request once this response is read: it is authenticated
    /// for the credential of this task (NTLM, Negotiate), and the pool lends to any task.
    func retireConnection()
}

extension ResponseReader {
    /// Reads and drops the rest of the body (a redirect's), up to `limit` bytes; past that the
    /// response is abandoned instead (its connection or stream is not worth the bytes).
    func discard(limit: Int = 1 << 20) async {
        var dropped = 0
        do {
            while let chunk = try await next() {
                dropped += chunk.count
                if dropped > limit {
                    abandon()
                    return
                }
            }
        } catch {
            abandon()
        }
    }
}
