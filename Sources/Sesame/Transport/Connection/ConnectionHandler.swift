/// The protocol a ``Connection`` carries, above its bytes: HTTP/1.1 (`HTTP1Connection`), HTTP/2
/// (`HTTP2Connection`), or the plain byte stream of Connection's public API (`RawStream`).
///
/// The connection pushes what arrives, decrypted, while the handler says it takes more; every
/// call is made on the connection's loop, and a handler is told nothing after
/// ``connectionClosed(_:)``.
protocol ConnectionHandler: AnyObject {
    /// True while the handler takes more input. When it turns true again, the handler calls
    /// ``Connection/resumeInput()`` (what waited in the TLS engine or the kernel is read then).
    var wantsInput: Bool { get }

    /// Bytes arrived (plaintext).
    func received(_ bytes: [UInt8])

    /// No more bytes will arrive: the peer ended its stream, with TLS's close_notify (or a plain
    /// TCP end) when `cleanly`, else without it (a possible truncation).
    func inputEnded(cleanly: Bool)

    /// Everything written so far was handed to the kernel.
    func outputFlushed()

    /// The connection failed or was closed with `error`: whatever waits on the handler fails.
    func connectionClosed(_ error: SesameError)
}
