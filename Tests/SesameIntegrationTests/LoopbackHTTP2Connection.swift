@testable import Sesame

/// An HTTP/2 connection (prior knowledge, plain TCP) to a server on 127.0.0.1, not yet started,
/// that tells nobody when it retires or frees a slot: for tests that drive the connection itself.
func loopbackHTTP2Connection(
    port: Int,
    idleTimeout: Duration = .seconds(60)
) async throws -> (connection: Connection, http2: HTTP2Connection) {
    let connection = try await Connection.connect(host: "127.0.0.1", port: port, tls: nil)
    let http2 = try HTTP2Connection(
        connection,
        origin: Origin(scheme: "http", host: "127.0.0.1", port: port),
        idleTimeout: idleTimeout,
        onRetire: { _ in },
        onSlotFreed: { _ in }
    )
    return (connection, http2)
}
