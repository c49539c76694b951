import FoundationEssentials
import Glibc
import Synchronization

/// A client connection on an ``EventLoop``: plain TCP, or TLS whose handshake suspends for
/// asynchronous decisions.
///
/// With TLS, when the server's chain arrives the handshake stops (`SSL_set_retry_verify`) until
/// ``TLSHandshakeHooks/serverTrust`` answers; when the server asks for a client certificate it stops
/// (`SSL_ERROR_WANT_X509_LOOKUP`) until ``TLSHandshakeHooks/clientCertificate`` answers. While it
/// waits, the socket is not polled (no CPU) and every other connection on the loop proceeds.
/// ``connect(host:port:tls:hooks:connectTimeout:nameCacheLifetime:on:)`` returns
/// only after both decisions and the handshake are complete, so no application byte is ever
/// written before them. A resumed session goes through the trust decision again on its stored
/// chain.
///
/// TLS runs in a TLS engine (`TLSEngine`) over byte buffers (the socket is read straight into
/// its inbound buffer, its output is written to the socket): OpenSSL never touches the socket,
/// which makes back-pressure explicit.
/// ``read(maxLength:timeout:)`` reads from the socket only while a read is waiting; ``write(_:)`` returns
/// when the bytes were handed to the kernel.
public final class Connection: @unchecked Sendable {
    // @unchecked: every `var` below is touched only on `loop`, that is by the thread holding the
    // loop's ownership (each entry point goes through `execute` or `runOnLoop`, and the callbacks
    // run inside SSL calls made there); `infoBox` is locked; the rest is immutable.
    let loop: EventLoop
    /// The host the connection was made for.
    public let host: String
    /// The port.
    public let port: Int
    /// TLS settings; meaningful only when ``usesTLS``. The TLS fields change (on the loop) only
    /// when ``startTLS(serverName:port:tls:hooks:)`` turns a plain tunnel into TLS.
    var configuration: TLSConfiguration
    var usesTLS: Bool
    let connectTimeout: Duration
    var hooks: TLSHandshakeHooks
    var context: TLSContext?

    var phase: Phase = .idle
    /// The TLS session while the connection has one (its `SSL` is freed with it, once released).
    var tls: TLSEngine?
    /// Through an HTTPS proxy's tunnel, the proxy's session, which carries `tls` inside its data
    /// (see `Connection+Carrier.swift`); nil otherwise.
    var carrier: TLSEngine?
    /// The carrier's stream ended: the tunnel carries no more bytes.
    var carrierEnded = false
    /// The socket, its registration and what waits to be written, once connected.
    var channel: SocketChannel?
    var connector: TCPConnector?
    var remoteAddress: SocketAddress?
    var handshakeTimer: TimerHandle?
    /// Ends connecting (TCP and the TLS handshake, decisions included) at ``connectTimeout``.
    var establishTimer: TimerHandle?
    /// When the waiting read times out, and its timeout (for the message).
    var readDeadline: (at: ContinuousClock.Instant, timeout: Duration)?
    /// The waiting read's deadline only ends the wait (``Connection/ReadWaitEnded``), not the
    /// connection (see `read(maxLength:waitingAtMost:)`).
    var readEndsQuietly = false
    /// The timer watching read deadlines (see `watchRead`).
    var readWatchdog: (handle: TimerHandle, at: ContinuousClock.Instant)?
    var socketEOF = false
    /// Set when the socket failed; reported once OpenSSL has looked at what arrived before it.
    var socketError: SesameError?
    /// Who reads the socket, and so what the loop watches it for.
    var readState: ReadState = .inactive
    /// The peer shut down its sending side: no answer comes after what the kernel holds.
    var peerClosed = false
    var failure: SesameError?
    var connectContinuation: CheckedContinuation<Void, any Error>?
    var pendingRead: (maxLength: Int, continuation: ReadContinuation)?
    var pendingWrites: [CheckedContinuation<Void, any Error>] = []
    /// Received bytes not yet read, for plain TCP (with TLS they wait inside OpenSSL).
    var inbound: [UInt8] = []
    var inboundOffset = 0
    let infoBox = LockedValue<TLSConnectionInfo?>(nil)
    let addressBox = LockedValue<String>("unknown")
    let closedWithoutNotifyBox = Atomic<Bool>(false)
    /// Orders each read's answer before its caller's use of it (`ReadContinuation`).
    let readHandoff = ReadHandoff()
    /// Set on the loop when the peer ended or reset the stream, or the connection failed or was
    /// closed; read by the pool before it hands out a kept-alive connection.
    let knownClosedBox = Atomic<Bool>(false)
    /// Told on the loop when bytes (or the peer's end) arrived while no read waited: an HTTP/2
    /// connection, which reads only while a stream needs it, then reads them (a PING, a GOAWAY).
    let unsolicitedInputHandler = LockedValue<(@Sendable () -> Void)?>(nil)

    enum Phase: Equatable {
        case idle
        case connecting
        case handshaking
        case established
        case closed
    }

    init(
        host: String,
        port: Int,
        tls: TLSConfiguration?,
        hooks: TLSHandshakeHooks,
        context: TLSContext?,
        connectTimeout: Duration,
        loop: EventLoop
    ) {
        self.host = host
        self.port = port
        self.configuration = tls ?? .makeClientConfiguration()
        self.usesTLS = tls != nil
        self.connectTimeout = connectTimeout
        self.hooks = hooks
        self.context = context
        self.loop = loop
    }
}
