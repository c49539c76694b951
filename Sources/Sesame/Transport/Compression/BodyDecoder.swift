/// A streaming decoder of a compressed response body (`Content-Encoding`), bounded in the size it
/// decodes to: the readers feed it one read's bytes at a time and take decoded pieces of at most
/// 64 KiB until it needs input again.
protocol BodyDecoder: AnyObject {
    /// True when every byte fed so far has been decoded and handed out.
    var needsInput: Bool { get }
    /// Takes the next compressed bytes. Call only when ``needsInput``.
    func feed(_ input: [UInt8])
    /// The next decoded piece, or nil when the input fed so far is used up.
    func nextPiece() throws -> [UInt8]?
    /// The body ended: it must have reached the end of the compressed stream.
    func finish() throws
}

/// The decoder a response's body needs: one coding other than identity (gzip, x-gzip, deflate,
/// br) is decoded; none, several or an unknown one is left as it is. nil also when `limit` is
/// nil (decoding is off) or the response has no body (a HEAD request's).
enum BodyDecoding {
    /// What Sesame asks for in `Accept-Encoding`.
    static let acceptEncoding = "gzip, deflate, br"

    static func decoder(for headers: HTTPHeaders, limit: Int?, isHeadRequest: Bool) throws -> (any BodyDecoder)? {
        guard let limit, !isHeadRequest else { return nil }
        enum Found {
            case zlib(Inflater.Coding)
            case brotli
        }
        var (found, count) = (Found?.none, 0)
        headers.forEachToken(in: "Content-Encoding") { token in
            if equalsIgnoringASCIICase(token, "identity") { return true }
            count += 1
            if equalsIgnoringASCIICase(token, "gzip") || equalsIgnoringASCIICase(token, "x-gzip") {
                found = .zlib(.gzip)
            } else if equalsIgnoringASCIICase(token, "deflate") {
                found = .zlib(.deflate)
            } else if equalsIgnoringASCIICase(token, "br") {
                found = .brotli
            } else {
                found = nil
            }
            return count == 1
        }
        guard count == 1, let found else { return nil }
        switch found {
        case .zlib(let coding): return try Inflater(coding: coding, limit: limit)
        case .brotli: return try BrotliDecoder(limit: limit)
        }
    }
}
