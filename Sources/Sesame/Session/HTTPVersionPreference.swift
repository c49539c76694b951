/// Which HTTP versions a session speaks (curl's `--http1.1`, `--http2` and
/// `--http2-prior-knowledge`).
public enum HTTPVersionPreference: Sendable, Hashable, CustomStringConvertible {
    /// HTTP/1.1 only: TLS offers ALPN `http/1.1`.
    case http1_1
    /// HTTP/2 when the server picks it in the TLS handshake (ALPN `h2, http/1.1`, RFC 9113
    /// section 3.2), HTTP/1.1 otherwise, and always HTTP/1.1 for `http` URLs. The default, as in
    /// URLSession and curl.
    case http2
    /// As ``http2`` over TLS, and over plain `http` HTTP/2 from the first byte (h2c with prior
    /// knowledge, RFC 9113 section 3.3): the server must speak it. Requests through a forwarding
    /// proxy stay HTTP/1.1.
    case http2PriorKnowledge

    public var description: String {
        switch self {
        case .http1_1: "HTTP/1.1"
        case .http2: "HTTP/2"
        case .http2PriorKnowledge: "HTTP/2 with prior knowledge"
        }
    }
}
