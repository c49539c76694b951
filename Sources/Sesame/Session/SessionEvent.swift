import FoundationEssentials
import Glibc

/// What happened on the wire for a task, for tools and logs (`sesame -v` prints these).
///
/// Delivered synchronously to ``SessionConfiguration/eventObserver`` from the task's exchange (in
/// the calling task, or on Sesame's event-loop thread for TLS handshake challenges and for tasks
/// that run there); the observer must be quick, must not block, and must not wait for Sesame.
/// Request heads are reported as sent, so they include credentials: redact before logging them
/// anywhere lasting.
public enum SessionEvent: Sendable {
    /// A connection is ready for a request: a new one, or a kept-alive one reused.
    case connected(origin: String, remoteAddress: String, reused: Bool)
    /// A new TLS connection finished its handshake.
    case tlsEstablished(origin: String, info: TLSConnectionInfo)
    /// An HTTP/2 stream was opened for a request on the connection to `origin`, as `streamID`.
    case streamOpened(origin: String, streamID: Int)
    /// A request head was written (the lines without the final empty line).
    case requestHeadSent(String)
    /// A response head arrived (1xx and final ones).
    case responseHeadReceived(String)
    /// A redirect is being followed.
    case redirected(status: Int, to: URL)
    /// A challenge was answered (or not): by whom, and how.
    case challenge(ChallengeTrace)
    /// A challenge field could not be read completely (what was skipped, and why).
    case challengeHeaderProblem(String)
    /// A proxy answered a `CONNECT` request for `target` (`host:port`) with `status`; the heads
    /// are reported as for requests (`requestHeadSent`, `responseHeadReceived`).
    case tunnel(proxy: String, target: String, status: Int)
    /// A credential that worked could not be stored as its persistence asked.
    case credentialNotStored(ProtectionSpace, SesameError)
    /// The ``TokenAuthenticator`` of ``SessionConfiguration/bearerAuthentication`` made a new
    /// token after `origin` refused one (or before the first request, when there was none);
    /// `waiting` requests go on with it.
    case tokenRefreshed(origin: String, waiting: Int)
    /// The ``TokenAuthenticator``'s refresh failed: each request that waited for it fails with
    /// the error, once.
    case tokenRefreshFailed(origin: String, SesameError)
}
