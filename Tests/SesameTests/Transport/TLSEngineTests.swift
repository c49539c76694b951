import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// The TLS engine back to back with an in-memory server: handshakes, suspensions, resumption,
/// records, close_notify and alerts, with no socket and no event loop.
// Serialized: these synchronous tests hold a concurrency thread while they run; one at a time,
// they leave the other threads to the tests that wait on the loop and on child processes.
@Suite(.serialized) struct TLSEngineTests {
    static let versions: [TLSConfiguration.ProtocolVersion] = [.tls12, .tls13]

    static func server(
        _ version: TLSConfiguration.ProtocolVersion? = nil,
        configure: (inout LocalServer.Configuration) -> Void = { _ in }
    ) throws -> InMemoryTLSServer {
        var configuration = LocalServer.Configuration(identity: try sharedPKI.leaf())
        if let version {
            configuration.minimumVersion = version
            configuration.maximumVersion = version
        }
        configure(&configuration)
        return try InMemoryTLSServer(configuration)
    }

    /// A server that requires a client certificate issued by the test client CA.
    static func mutualTLSServer(_ version: TLSConfiguration.ProtocolVersion) throws -> InMemoryTLSServer {
        try server(version) { $0.clientAuthentication = .required(trusting: [sharedPKI.clientCA.certificate]) }
    }

    @Test(arguments: versions)
    func theHandshakeStopsForTheTrustDecisionAndCarriesNoDataBeforeIt(
        version: TLSConfiguration.ProtocolVersion
    ) throws {
        let pair = try TLSEnginePair(try Self.server(version))
        let step = pair.handshake { _, _ in false }  // asks, and nobody answers yet
        guard case .decideTrust(resumed: false) = step else {
            Issue.record("expected a trust decision, got \(step)")
            return
        }
        let request = pair.client.trustRequest(resumed: false)
        #expect(request.peerChain.first?.subject.description.contains("CN=localhost") == true)
        #expect(request.host == "localhost")
        // Suspended: asking again changes nothing and sends nothing; no data may go out.
        for _ in 0..<3 {
            guard case .waitingForDecision = pair.client.handshake() else {
                Issue.record("the suspended handshake went on")
                return
            }
            #expect(pair.client.pendingOutput == 0)
        }
        #expect(throws: SesameError.self) { try pair.client.write(Array("GET / HTTP/1.1\r\n\r\n".utf8)) }
        #expect(pair.server.serverName == "localhost")

        pair.client.decideTrustByDefault(resumed: false)
        guard case .established = pair.handshake() else {
            Issue.record("the handshake did not finish after the decision")
            return
        }
        let info = pair.client.connectionInfo(remoteAddress: "memory")
        #expect(info.protocolVersion == (version == .tls13 ? "TLSv1.3" : "TLSv1.2"))
        #expect(info.trustEvaluation?.isTrusted == true)
        #expect(pair.server.protocolVersion == info.protocolVersion)

        try pair.client.write(Array("ping".utf8))
        #expect(pair.serverReads() == Array("ping".utf8))
        pair.server.write(Array("pong".utf8))
        #expect(pair.clientReads().bytes == Array("pong".utf8))
    }

    @Test(arguments: versions)
    func aRejectedServerGetsAnAlertAndTheEngineTheReasons(version: TLSConfiguration.ProtocolVersion) throws {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.trustRoots = .anchors([sharedPKI.untrustedRoot.certificate])
        let pair = try TLSEnginePair(try Self.server(version), tls: tls)
        let step = pair.handshake()
        guard case .failed(let error) = step else {
            Issue.record("expected a failure, got \(step)")
            return
        }
        #expect(error.code == .serverTrustRejected)
        #expect(error.description.contains("localhost"))
        guard case .failed(let reason) = pair.serverHandshake else {
            Issue.record("the server did not see the client's alert")
            return
        }
        #expect(reason.lowercased().contains("alert"))
        #expect(pair.serverReads().isEmpty)
    }

    @Test(arguments: versions)
    func theIdentityDecisionSuspendsAndTheServerSeesTheChosenCertificate(
        version: TLSConfiguration.ProtocolVersion
    ) throws {
        let pair = try TLSEnginePair(try Self.mutualTLSServer(version))
        let step = pair.handshake(decide: TLSEnginePair.stopAtIdentity)
        guard case .decideIdentity = step else {
            Issue.record("expected an identity decision, got \(step)")
            return
        }
        #expect(pair.client.identityRequest().acceptableIssuers == [sharedPKI.clientCA.certificate.subject])
        guard case .waitingForDecision = pair.client.handshake() else {
            Issue.record("the suspended handshake went on")
            return
        }
        let alice = try sharedPKI.clientCertificate(commonName: "alice")
        try pair.client.decideIdentity(try alice.identity())
        guard case .established = pair.handshake() else {
            Issue.record("the handshake did not finish after the identity")
            return
        }
        try pair.client.write(Array("hello".utf8))
        #expect(pair.serverReads() == Array("hello".utf8))
        #expect(pair.server.clientCertificateSubject?.contains("CN=alice") == true)
        #expect(pair.client.connectionInfo(remoteAddress: "memory").clientCertificate == alice.certificate)
    }

    @Test(arguments: versions)
    func noIdentityForAServerThatRequiresOneIsClientCertificateRequired(
        version: TLSConfiguration.ProtocolVersion
    ) throws {
        let pair = try TLSEnginePair(try Self.mutualTLSServer(version))
        var error: SesameError?
        switch pair.handshake() {
        case .failed(let failure):
            error = failure  // TLS 1.2: the server's alert ends the handshake
        case .established:
            // TLS 1.3: the client's handshake ends first; the server's alert is the first record.
            if case .failed(let failure) = pair.clientReads().last { error = failure }
        default:
            break
        }
        #expect(error?.code == .clientCertificateRequired)
    }

    /// The server's alert can be lost: a server that closes with the client's last flight unread
    /// resets the connection, and the reset can overtake the alert. The end of the connection is
    /// then the server's verdict on the answer to its certificate request, and only then.
    @Test func aHandshakeEndedAfterACertificateRequestIsTheServersVerdictOnTheAnswer() throws {
        let reset = SesameError(.connectionReset, "memory: Connection reset by peer")
        func answered(_ identity: Identity?) throws -> TLSEngine {
            let pair = try TLSEnginePair(try Self.mutualTLSServer(.tls12))
            let step = pair.handshake(decide: TLSEnginePair.stopAtIdentity)
            guard case .decideIdentity = step else { throw TLSEnginePairError(step: "\(step)") }
            try pair.client.decideIdentity(identity)
            _ = pair.client.handshake()  // the last flight, which the server never answers
            return pair.client
        }
        let none = try answered(nil).endedDuringHandshake(reset)
        #expect(none.code == .clientCertificateRequired)
        #expect(none.detail.contains("none was sent") && none.detail.contains("reset by peer"), "\(none)")

        let alice = try sharedPKI.clientCertificate(commonName: "alice").identity()
        let sent = try answered(alice).endedDuringHandshake(reset)
        #expect(sent.code == .clientCertificateRejected)
        #expect(sent.detail.contains("alice"), "\(sent)")

        // With no certificate request, or one not answered yet, the end stands as it was.
        let plain = try TLSEnginePair(try Self.server(.tls12))
        _ = plain.handshake()
        #expect(plain.client.endedDuringHandshake(reset).code == .connectionReset)
        let pending = try TLSEnginePair(try Self.mutualTLSServer(.tls12))
        _ = pending.handshake(decide: TLSEnginePair.stopAtIdentity)
        #expect(pending.client.endedDuringHandshake(reset).code == .connectionReset)
    }

    @Test func aResumedSessionIsDecidedAgainOnItsStoredChain() throws {
        let server = try Self.server(.tls13)
        let port = Int.random(in: 10_000...60_000)
        let first = try TLSEnginePair(server, port: port)
        guard case .established = first.handshake() else {
            Issue.record("the first handshake failed")
            return
        }
        _ = first.clientReads()  // the session tickets, which the engine keeps
        #expect(first.client.context.sessions.session(for: first.client.sessionKey) != nil)

        let second = try TLSEnginePair(server, port: port)
        var asked: [Bool] = []
        let step = second.handshake { engine, step in
            if case .decideTrust(let resumed) = step {
                asked.append(resumed)
                #expect(
                    engine.trustRequest(resumed: resumed).peerChain.first?.subject.description.contains("localhost")
                        == true
                )
            }
            return TLSEnginePair.decideByDefault(engine, step)
        }
        guard case .established = step else {
            Issue.record("the resumed handshake failed: \(step)")
            return
        }
        #expect(asked == [true])
        #expect(second.server.sessionReused)
        #expect(second.client.connectionInfo(remoteAddress: "memory").isSessionReused)
    }

    @Test func closeNotifyEndsTheStreamAndTheEndOfInputWithoutOneIsTruncation() throws {
        let server = try Self.server()
        let closed = try TLSEnginePair(server)
        try closed.establish()
        closed.server.write(Array("last".utf8))
        closed.server.shutdown()
        let result = closed.clientReads()
        #expect(result.bytes == Array("last".utf8))
        #expect(result.last == .closeNotify)

        let cut = try TLSEnginePair(server)
        try cut.establish()
        _ = cut.clientReads()
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1024, alignment: 16)
        defer { scratch.deallocate() }
        #expect(cut.client.read(maxLength: 1024, inputEnded: true, scratch: scratch) == .truncated)

        // The client's own close_notify reaches the server.
        closed.client.close()
        closed.shuttle()
        #expect(closed.server.read() == .closeNotify)
    }

    @Test func aForgedRecordFailsTheReadWithTheTLSReason() throws {
        let pair = try TLSEnginePair(try Self.server())
        try pair.establish()
        _ = pair.clientReads()
        // An application-data record whose authentication cannot hold.
        let forged: [UInt8] = [0x17, 0x03, 0x03, 0x00, 0x20] + [UInt8](repeating: 0xA5, count: 0x20)
        _ = forged.withUnsafeBytes { pair.client.receive($0) }
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1024, alignment: 16)
        defer { scratch.deallocate() }
        guard case .failed(let error) = pair.client.read(maxLength: 1024, inputEnded: false, scratch: scratch) else {
            Issue.record("a forged record was accepted")
            return
        }
        #expect(error.code == .tlsProtocolError)
        #expect(error.description.contains("localhost"))
        #expect(pair.client.pendingOutput > 0)  // the alert it owes the server
    }

    @Test func theInboundBufferIsBoundedAndALargeTransferComesThroughInPieces() throws {
        let pair = try TLSEnginePair(try Self.server(), inboundCapacity: TLSEngine.largestRecord)
        try pair.establish()
        _ = pair.clientReads()
        let body = (0..<(1 << 18)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        pair.server.write(body)
        let ciphertext = pair.server.takeOutput()
        let taken = ciphertext.withUnsafeBytes { pair.client.receive($0) }
        #expect(taken == TLSEngine.largestRecord)  // no more than the bound is held
        pair.server.receive([])  // nothing: the rest is fed below, as the bound allows
        var fed = taken
        var received: [UInt8] = []
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { scratch.deallocate() }
        for _ in 0..<1_000 where received.count < body.count {
            if case .bytes(let chunk) = pair.client.read(maxLength: 65_536, inputEnded: false, scratch: scratch) {
                received += chunk
            }
            fed += ciphertext.withUnsafeBytes { pair.client.receive(UnsafeRawBufferPointer(rebasing: $0[fed...])) }
        }
        #expect(received == body)
    }

    @Test func aKeyUpdateIsAnsweredWithinTheRecordsAndDataFlowsOn() throws {
        let pair = try TLSEnginePair(try Self.server(.tls13))
        try pair.establish()
        _ = pair.clientReads()
        pair.server.requestKeyUpdate()
        pair.server.write(Array("after update".utf8))
        #expect(pair.clientReads().bytes == Array("after update".utf8))
        try pair.client.write(Array("answer".utf8))
        #expect(pair.serverReads() == Array("answer".utf8))
    }

    @Test func anIPLiteralIsNeverSentAsAServerName() throws {
        let pair = try TLSEnginePair(try Self.server(), serverName: "127.0.0.1")
        guard case .established = pair.handshake() else {
            Issue.record("the handshake with 127.0.0.1 failed")
            return
        }
        #expect(pair.server.serverName == nil)
    }

    /// TLS inside TLS, as through an HTTPS proxy's tunnel: the inner engine's ciphertext is the
    /// outer engine's plaintext, with no socket pair between them.
    @Test func oneEngineCarriesAnother() throws {
        let proxy = try TLSEnginePair(try Self.server())
        try proxy.establish()
        _ = proxy.clientReads()
        let origin = try InMemoryTLSServer(
            LocalServer.Configuration(identity: try sharedPKI.leaf(commonName: "origin"))
        )
        let tls = trustingTestRoot()
        let inner = try TLSEngine(
            context: try TLSContext.shared(for: tls),
            configuration: tls,
            serverName: "localhost",
            port: 8443
        )
        let originSide = try origin.accept()
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
        defer { scratch.deallocate() }
        /// One round: inner → outer → proxy server → origin, and back.
        func round() {
            var out: [UInt8] = []
            inner.drainOutput(into: &out)
            if !out.isEmpty { try? proxy.client.write(out) }
            originSide.receive(proxy.serverReads())
            _ = originSide.handshake()
            proxy.server.write(originSide.takeOutput())
            let bytes = proxy.clientReads().bytes
            #expect(bytes.withUnsafeBytes { inner.receive($0) } == bytes.count)
        }
        var step = inner.handshake()
        for _ in 0..<16 {
            if case .decideTrust(let resumed) = step { inner.decideTrustByDefault(resumed: resumed) }
            if case .established = step { break }
            round()
            step = inner.handshake()
        }
        guard case .established = step else {
            Issue.record("the inner handshake did not finish: \(step)")
            return
        }
        #expect(
            inner.connectionInfo(remoteAddress: "tunnel").peerChain.first?.subject.description.contains("OU=origin")
                == true
        )
        try inner.write(Array("through the tunnel".utf8))
        round()
        var received: [UInt8] = []
        while case .bytes(let chunk) = originSide.read() { received += chunk }
        #expect(received == Array("through the tunnel".utf8))
    }
}
