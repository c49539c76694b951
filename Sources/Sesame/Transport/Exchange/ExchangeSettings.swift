/// What an exchange over either protocol needs from above, as transport values: the session
/// builds it once from its configuration (handing the whole configuration to every request
/// retained and released each reference in it), and the transport knows nothing of sessions.
struct ExchangeSettings: Sendable {
    /// Fields added to a request that has none of that name (a session's default headers,
    /// then `Accept-Encoding` when bodies are decoded).
    let addedHeaders: [HTTPHeaders.Field]
    let requestTimeout: Duration
    /// The decoded-body limit; nil when bodies are not decoded.
    let decodedBodyLimit: Int?
    /// Told of each head as it goes out or comes in (for `-v` and event observers).
    let onWireEvent: (@Sendable (WireEvent) -> Void)?
    /// How long a body sent with `Expect: 100-continue` waits for the server's answer.
    var expectContinueTimeout = Duration.seconds(1)
}

/// A message head on the wire, as text without the final blank line.
enum WireEvent: Sendable {
    /// An HTTP/2 stream was opened for the request on the connection to `origin`.
    case streamOpened(origin: String, Int)
    case requestHeadSent(String)
    case responseHeadReceived(String)
}

/// Told how many body bytes were just handed to the connection (upload progress).
typealias BodyProgress = @Sendable (Int) async -> Void
