import FoundationEssentials
import Glibc

// TLS inside TLS: an HTTPS proxy's tunnel. The proxy's session (`carrier`) takes the socket's
// bytes; its plaintext is the origin session's (`tls`) ciphertext, and the origin's output is
// written as the carrier's data. One engine feeds the other on the loop: no socket pair, no relay
// task, no second connection. Everything here runs on the connection's event loop.
extension Connection {
    /// Moves the carrier's plaintext into the inner engine, as far as its inbound buffer takes it
    /// (the rest stays inside the carrier, still encrypted: the bound holds through both layers).
    /// Reading can leave output in the carrier (alerts, key updates): the caller flushes. The
    /// tunnel ending (close_notify, or the socket's end) is the end of the inner stream.
    func pumpCarrier() {
        guard let carrier, let tls, !carrierEnded else { return }
        while let space = tls.inboundSpace() {
            switch carrier.read(maxLength: space.count, inputEnded: socketEOF, scratch: loop.decryptBuffer) {
            case .bytes(let bytes):
                bytes.withUnsafeBytes { space.copyMemory(from: $0) }
                tls.commitInbound(bytes.count)
            case .needsInput:
                return
            case .closeNotify, .truncated:
                endTunnel(nil)
                return
            case .failed(let error):
                endTunnel(error)
                return
            }
        }
    }

    /// The tunnel carries nothing more: for the inner session, its input ended (`error`: why).
    private func endTunnel(_ error: SesameError?) {
        carrierEnded = true
        socketEOF = true
        knownClosedBox.store(true, ordering: .releasing)
        if let error, socketError == nil { socketError = error }
    }

    /// Hands the inner engine's output to the carrier as data. False when that failed the
    /// connection.
    func carryOutput() -> Bool {
        guard let carrier, let tls, tls.pendingOutput > 0 else { return true }
        var records: [UInt8] = []
        tls.drainOutput(into: &records)
        do {
            try carrier.write(records)
        } catch {
            fail(error)
            return false
        }
        return true
    }
}
