import FoundationEssentials

/// The TLS a connection's bytes go through: one session, or through an HTTPS proxy's tunnel two,
/// the origin's inside the proxy's (TLS inside TLS).
///
/// The socket's ciphertext goes into the outer session (the carrier when there is one); the
/// carrier's plaintext is the inner session's ciphertext, moved on as far as the inner session's
/// inbound buffer takes it (the rest stays encrypted in the carrier, so the bound holds through
/// both layers). The inner session's output is written as the carrier's data. One engine feeds the
/// other in memory: no socket pair, no relay, no second connection. Loop-confined, no I/O.
final class TLSStack {
    /// The session the connection's data goes through (the origin's).
    let inner: TLSEngine
    /// The proxy's session the inner one runs inside; nil without a tunnel.
    let carrier: TLSEngine?
    /// The carrier's stream ended (close_notify, truncation or failure): the tunnel carries no
    /// more bytes, and `carrierFailure` says why when it failed.
    private(set) var carrierEnded = false
    private(set) var carrierFailure: SesameError?

    init(_ inner: TLSEngine, inside carrier: TLSEngine? = nil) {
        self.inner = inner
        self.carrier = carrier
    }

    /// The engine the socket's ciphertext goes into.
    var outermost: TLSEngine { carrier ?? inner }

    /// Where a socket read may write ciphertext without a copy (see ``TLSEngine/inboundSpace()``).
    func inboundSpace() -> UnsafeMutableRawBufferPointer? { outermost.inboundSpace() }

    /// Takes `count` bytes written into ``inboundSpace()``.
    func commitInbound(_ count: Int) { outermost.commitInbound(count) }

    /// Bytes of the inner stream that came before its handshake began (read past a proxy's
    /// response head, already out of the carrier); returns how many the inner session took.
    func receiveInner(_ bytes: UnsafeRawBufferPointer) -> Int { inner.receive(bytes) }

    /// Moves the carrier's plaintext into the inner session; the tunnel's end is the end of the
    /// inner stream. Reading can leave output in the carrier (alerts, key updates): the owner
    /// drains output after it.
    func pumpCarrier(inputEnded: Bool, scratch: UnsafeMutableRawBufferPointer) {
        guard let carrier, !carrierEnded else { return }
        while let space = inner.inboundSpace() {
            switch carrier.read(maxLength: space.count, inputEnded: inputEnded, scratch: scratch) {
            case .bytes(let bytes):
                bytes.withUnsafeBytes { space.copyMemory(from: $0) }
                inner.commitInbound(bytes.count)
            case .needsInput:
                return
            case .closeNotify, .truncated:
                carrierEnded = true
                return
            case .failed(let error):
                carrierEnded = true
                carrierFailure = error
                return
            }
        }
    }

    /// Whether the inner session's input has ended: the socket's (`socketEnded`), or the tunnel's.
    func inputEnded(socketEnded: Bool) -> Bool { carrier == nil ? socketEnded : carrierEnded }

    /// Decrypts what the inner session can, up to `maxLength` bytes.
    func read(maxLength: Int, socketEnded: Bool, scratch: UnsafeMutableRawBufferPointer) -> TLSEngine.ReadOutcome {
        pumpCarrier(inputEnded: socketEnded, scratch: scratch)
        return inner.read(maxLength: maxLength, inputEnded: inputEnded(socketEnded: socketEnded), scratch: scratch)
    }

    /// Ciphertext waiting for the socket, in every layer.
    var hasPendingOutput: Bool { inner.pendingOutput > 0 || (carrier?.pendingOutput ?? 0) > 0 }

    /// Moves what waits to be sent to the end of `buffer`: the inner session's records, through
    /// the carrier when there is one.
    /// - Throws: the carrier's failure to take them (the connection is then unusable).
    func drainOutput(into buffer: inout [UInt8]) throws(SesameError) {
        guard let carrier else {
            inner.drainOutput(into: &buffer)
            return
        }
        if inner.pendingOutput > 0 {
            var records: [UInt8] = []
            inner.drainOutput(into: &records)
            try carrier.write(records)
        }
        carrier.drainOutput(into: &buffer)
    }

    /// Queues close_notify in every layer (sent with the next ``drainOutput(into:)``).
    func close() {
        inner.close()
        carrier?.close()
    }

    /// The reason a fatal alert already received gives for the stream's end, in either layer.
    func receivedAlert() -> SesameError? { carrier?.receivedAlert() ?? inner.receivedAlert() }
}
