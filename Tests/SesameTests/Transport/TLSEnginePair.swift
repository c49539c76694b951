import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// A client ``TLSEngine`` and an in-memory server session wired back to back, with no socket.
final class TLSEnginePair {
    let client: TLSEngine
    let server: InMemoryTLSServer.Session
    /// Ciphertext the client's inbound buffer could not take yet (it is bounded).
    private var toClient: [UInt8] = []
    private(set) var serverHandshake: InMemoryTLSServer.Session.HandshakeState = .inProgress

    init(
        _ server: InMemoryTLSServer,
        tls: TLSConfiguration = trustingTestRoot(),
        serverName: String = "localhost",
        port: Int = Int.random(in: 10_000...60_000),
        inboundCapacity: Int = 65_536
    ) throws {
        client = try TLSEngine(
            context: try TLSContext.shared(for: tls),
            configuration: tls,
            serverName: serverName,
            port: port,
            inboundCapacity: inboundCapacity
        )
        self.server = try server.accept()
    }

    /// Moves the client's output to the server (which runs its handshake until it completes), and
    /// the server's output to the client as far as its inbound buffer takes it. Returns how many
    /// bytes moved.
    @discardableResult
    func shuttle() -> Int {
        var out: [UInt8] = []
        client.drainOutput(into: &out)
        server.receive(out)
        if serverHandshake == .inProgress { serverHandshake = server.handshake() }
        toClient += server.takeOutput()
        let taken = toClient.withUnsafeBytes { client.receive($0) }
        toClient.removeFirst(taken)
        return out.count + taken
    }

    /// Runs the client's handshake, answering each decision with `decide`, until it is
    /// established, fails, or waits for a decision `decide` did not make.
    func handshake(
        decide: (TLSEngine, TLSEngine.HandshakeStep) -> Bool = TLSEnginePair.decideByDefault
    ) -> TLSEngine.HandshakeStep {
        for _ in 0..<32 {
            let step = client.handshake()
            let moved = shuttle()
            switch step {
            case .established, .failed: return step
            case .decideTrust, .decideIdentity:
                if !decide(client, step) { return step }
            case .waitingForDecision:
                return step
            case .needsInput:
                if moved == 0 { return step }
            }
        }
        Issue.record("the handshake did not settle in 32 rounds")
        return client.handshake()
    }

    /// Runs the handshake with the default decisions; throws unless it is established.
    func establish() throws {
        let step = handshake()
        guard case .established = step else { throw TLSEnginePairError(step: "\(step)") }
    }

    /// Decides trust the default way and sends no client certificate.
    static func decideByDefault(_ engine: TLSEngine, _ step: TLSEngine.HandshakeStep) -> Bool {
        switch step {
        case .decideTrust(let resumed): engine.decideTrustByDefault(resumed: resumed)
        case .decideIdentity: try? engine.decideIdentity(nil)
        default: break
        }
        return true
    }

    /// Decides trust the default way and stops at the identity decision, leaving it to the test.
    static func stopAtIdentity(_ engine: TLSEngine, _ step: TLSEngine.HandshakeStep) -> Bool {
        switch step {
        case .decideTrust(let resumed):
            engine.decideTrustByDefault(resumed: resumed)
            return true
        case .decideIdentity: return false
        default: return true
        }
    }

    /// What the client decrypts until it needs more, after the server's output arrived.
    func clientReads(maxLength: Int = 65_536) -> (bytes: [UInt8], last: TLSEngine.ReadOutcome) {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { scratch.deallocate() }
        var bytes: [UInt8] = []
        for _ in 0..<100_000 {
            shuttle()
            let outcome = client.read(maxLength: maxLength, inputEnded: false, scratch: scratch)
            guard case .bytes(let chunk) = outcome else {
                if case .needsInput = outcome, !toClient.isEmpty { continue }
                return (bytes, outcome)
            }
            bytes += chunk
        }
        return (bytes, .needsInput)
    }

    /// What the server decrypts of what the client sent.
    func serverReads() -> [UInt8] {
        shuttle()
        var bytes: [UInt8] = []
        while case .bytes(let chunk) = server.read() { bytes += chunk }
        return bytes
    }
}

extension TLSEngine {
    /// Decides trust as Sesame does when no hook is set.
    func decideTrustByDefault(resumed: Bool) {
        let evaluation = evaluateByDefault(trustRequest(resumed: resumed))
        decideTrust(evaluation.isTrusted, evaluation: evaluation)
    }
}

struct TLSEnginePairError: Error, CustomStringConvertible {
    let step: String
    var description: String { "the handshake ended at \(step), not established" }
}
