import Foundation
import SesameTesting
import Testing

@testable import Sesame

@Suite struct ConnectionTests {
    @Test(arguments: [TLSConfiguration.ProtocolVersion.tls12, .tls13])
    func handshakeWithPrivateAnchorCompletesARequest(version: TLSConfiguration.ProtocolVersion) async throws {
        var server = LocalServer.Configuration(identity: try sharedPKI.leaf())
        server.minimumVersion = version
        server.maximumVersion = version
        let tlsServer = try LocalServer(server)
        defer { tlsServer.shutdown() }

        let connection = try await Connection.connect(
            host: "localhost",
            port: tlsServer.port,
            tls: trustingTestRoot()
        )
        let body = try await exchange(connection)
        await connection.close()

        #expect(body.contains("client: none"))
        #expect(connection.tlsInfo?.protocolVersion == version.description)
        #expect(connection.tlsInfo?.peerChain.first?.subject.commonName == "localhost")
        #expect(connection.tlsInfo?.peerChain.count == 2)
        let record = try #require(await tlsServer.finishedConnections(atLeast: 1).first)
        #expect(record.serverName == "localhost")
        #expect(record.clientSentCloseNotify)
    }

    @Test func plainTCPCarriesTheSameAPI() async throws {
        let server = try LocalServer(.plainHTTP)
        defer { server.shutdown() }
        let connection = try await Connection.connect(host: "localhost", port: server.port, tls: nil)
        let body = try await exchange(connection)
        let second = try await exchange(connection, path: "/again")
        await connection.close()
        #expect(body.hasPrefix("hello"))
        #expect(second.hasPrefix("hello"))
        #expect(connection.tlsInfo == nil)
        #expect(server.requests.map(\.target) == ["/", "/again"])
        #expect(server.requests.map(\.connectionIndex) == [0, 0])
    }

    /// A write larger than the kernel's socket buffers goes out whole: what the kernel did not
    /// take at once goes when the socket is writable again (it once waited for some other event).
    @Test(.timeLimit(.minutes(1))) func aWriteLargerThanTheSocketBuffersGoesOutWhole() async throws {
        let server = try LocalServer(.plainHTTP)
        defer { server.shutdown() }
        let connection = try await Connection.connect(host: "localhost", port: server.port, tls: nil)
        let body = [UInt8]((0..<(16 << 20)).map { UInt8(truncatingIfNeeded: $0 >> 7) })
        let head = "POST /upload HTTP/1.1\r\nHost: localhost\r\nContent-Length: \(body.count)\r\n\r\n"
        try await connection.write(Array(head.utf8) + body)
        let answer = try await connection.read()
        #expect(String(decoding: answer, as: UTF8.self).hasPrefix("HTTP/1.1 200"))
        await connection.close()
        #expect(server.requests.first?.body == body)
    }

    @Test func aPlainPeerThatClosesEndsTheStream() async throws {
        var configuration = LocalServer.Configuration.plainHTTP
        configuration.handler = { _ in .raw("partial", thenClose: true) }
        let server = try LocalServer(configuration)
        defer { server.shutdown() }
        let connection = try await Connection.connect(host: "127.0.0.1", port: server.port, tls: nil)
        try await connection.write(Array("GET / HTTP/1.1\r\nHost: x\r\n\r\n".utf8))
        var received: [UInt8] = []
        while true {
            let chunk = try await connection.read()
            if chunk.isEmpty { break }
            received += chunk
        }
        await connection.close()
        #expect(String(decoding: received, as: UTF8.self) == "partial")
    }

    @Test func applicationProtocolIsNegotiated() async throws {
        var server = LocalServer.Configuration(identity: try sharedPKI.leaf())
        server.applicationProtocols = ["http/1.1"]
        let tlsServer = try LocalServer(server)
        defer { tlsServer.shutdown() }
        var configuration = trustingTestRoot()
        configuration.applicationProtocols = ["h2", "http/1.1"]
        let connection = try await Connection.connect(
            host: "localhost",
            port: tlsServer.port,
            tls: configuration
        )
        await connection.close()
        #expect(connection.tlsInfo?.applicationProtocol == "http/1.1")
    }

    @Test func minimumVersionAboveTheServersMaximumFails() async throws {
        var server = LocalServer.Configuration(identity: try sharedPKI.leaf())
        server.maximumVersion = .tls12
        let tlsServer = try LocalServer(server)
        defer { tlsServer.shutdown() }
        var configuration = trustingTestRoot()
        configuration.minimumVersion = .tls13
        await #expect(throws: SesameError(.tlsHandshakeFailed, "")) {
            _ = try await Connection.connect(host: "localhost", port: tlsServer.port, tls: configuration)
        }
    }

    @Test func ipLiteralsConnectWithoutServerNameAndMatchIPSANs() async throws {
        let tlsServer = try LocalServer(.init(identity: try sharedPKI.leaf()))
        defer { tlsServer.shutdown() }
        let connection = try await Connection.connect(
            host: "127.0.0.1",
            port: tlsServer.port,
            tls: trustingTestRoot()
        )
        _ = try await exchange(connection)
        await connection.close()
        let record = try #require(await tlsServer.finishedConnections(atLeast: 1).first)
        #expect(record.serverName == nil)
    }

    @Test(arguments: ["::1", "[::1]"])
    func ipv6LoopbackWorks(host: String) async throws {
        var server = LocalServer.Configuration(identity: try sharedPKI.leaf())
        server.useIPv6 = true
        let tlsServer = try LocalServer(server)
        defer { tlsServer.shutdown() }
        let connection = try await Connection.connect(
            host: host,
            port: tlsServer.port,
            tls: trustingTestRoot()
        )
        let body = try await exchange(connection)
        await connection.close()
        #expect(body.hasPrefix("hello"))
        #expect(connection.tlsInfo?.remoteAddress.hasPrefix("[::1]:") == true)
    }

    @Test func defaultHandlingRejectsAnUntrustedChainBeforeAnyApplicationByte() async throws {
        let tlsServer = try LocalServer(.init(identity: try sharedPKI.untrustedLeaf()))
        defer { tlsServer.shutdown() }
        let error = await #expect(throws: SesameError.self) {
            _ = try await Connection.connect(
                host: "localhost",
                port: tlsServer.port,
                tls: trustingTestRoot()
            )
        }
        #expect(error?.code == .serverTrustRejected)
        #expect(error?.detail.contains("untrusted root") == true)
        let record = try #require(await tlsServer.finishedConnections(atLeast: 1).first)
        #expect(record.applicationBytesReceived == 0)
        #expect(!record.handshakeCompleted)
    }

    @Test(arguments: [
        ("expired", "expired"), ("not yet valid", "not yet valid"), ("wrong host", "hostname mismatch"),
        ("self-signed", "self-signed"),
    ])
    func defaultHandlingNamesTheReason(leafKind: String, expected: String) async throws {
        let leaf: TestIssuedCertificate
        switch leafKind {
        case "expired": leaf = try sharedPKI.expiredLeaf()
        case "not yet valid": leaf = try sharedPKI.notYetValidLeaf()
        case "wrong host": leaf = try sharedPKI.wrongHostLeaf()
        default: leaf = try sharedPKI.selfSignedLeaf()
        }
        let tlsServer = try LocalServer(.init(identity: leaf))
        defer { tlsServer.shutdown() }
        let error = await #expect(throws: SesameError.self) {
            _ = try await Connection.connect(
                host: "localhost",
                port: tlsServer.port,
                tls: trustingTestRoot()
            )
        }
        #expect(error?.code == .serverTrustRejected)
        #expect(error?.detail.contains(expected) == true, "\(String(describing: error))")
    }

    @Test func delegateRejectionFailsTheConnectionAndTheServerGetsNoData() async throws {
        let tlsServer = try LocalServer(.init(identity: try sharedPKI.leaf()))
        defer { tlsServer.shutdown() }
        let seen = Recorder<ServerTrust>()
        let hooks = TLSHandshakeHooks(serverTrust: { request in
            seen.append(request)
            return false
        })
        let error = await #expect(throws: SesameError.self) {
            _ = try await Connection.connect(
                host: "localhost",
                port: tlsServer.port,
                tls: trustingTestRoot(),
                hooks: hooks
            )
        }
        #expect(error?.code == .serverTrustRejected)
        #expect(seen.all.count == 1)
        #expect(seen.all.first?.peerChain.first?.subject.commonName == "localhost")
        #expect(seen.all.first?.evaluate().isTrusted == true)
        let record = try #require(await tlsServer.finishedConnections(atLeast: 1).first)
        #expect(record.applicationBytesReceived == 0)
        #expect(record.requestHeads.isEmpty)
    }

    @Test func delegateCanAcceptAChainDefaultHandlingWouldReject() async throws {
        let selfSigned = try sharedPKI.selfSignedLeaf()
        let tlsServer = try LocalServer(.init(identity: selfSigned))
        defer { tlsServer.shutdown() }
        // The seeds' "compare with the bundled certificate" flow.
        let bundled = selfSigned.certificate
        let hooks = TLSHandshakeHooks(serverTrust: { request in request.peerChain.first == bundled })
        let connection = try await Connection.connect(host: "localhost", port: tlsServer.port, hooks: hooks)
        let body = try await exchange(connection)
        await connection.close()
        #expect(body.hasPrefix("hello"))
    }

    @Test func aSlowDecisionHoldsOnlyItsOwnHandshake() async throws {
        let loop = try EventLoop(name: "slow-decision")
        defer { loop.shutdown() }
        let tlsServer = try LocalServer(.init(identity: try sharedPKI.leaf()))
        defer { tlsServer.shutdown() }
        let gate = Gate()
        let events = Recorder<String>()
        let slowHooks = TLSHandshakeHooks(serverTrust: { request in
            events.append("slow asked")
            await gate.wait()
            events.append("slow answered")
            return request.evaluate().isTrusted
        })
        let slow = Task {
            let connection = try await Connection.connect(
                host: "localhost",
                port: tlsServer.port,
                tls: trustingTestRoot(),
                hooks: slowHooks,
                on: loop
            )
            events.append("slow connected")
            let body = try await exchange(connection)
            await connection.close()
            return body
        }
        try #require(await events.waitUntil(within: .seconds(60)) { $0.contains("slow asked") })

        let fast = try await Connection.connect(
            host: "localhost",
            port: tlsServer.port,
            tls: trustingTestRoot(),
            on: loop
        )
        let fastBody = try await exchange(fast)
        await fast.close()
        events.append("fast done")

        // The waiting handshake costs no CPU: the loop does not wake while it is held for a second.
        let wakeUpsBefore = loop.wakeUpCount
        let clock = ContinuousClock()
        let started = clock.now
        try await Task.sleep(for: .seconds(1))
        let wakeUpsWhileHeld = loop.wakeUpCount - wakeUpsBefore
        gate.open()
        let slowBody = try await slow.value

        #expect(fastBody.hasPrefix("hello"))
        #expect(slowBody.hasPrefix("hello"))
        #expect(events.all == ["slow asked", "fast done", "slow answered", "slow connected"])
        #expect(clock.now - started >= .seconds(1))
        #expect(wakeUpsWhileHeld <= 2)
    }

    @Test func cancellingAConnectWhileTheDecisionIsPendingFailsWithCancelled() async throws {
        let tlsServer = try LocalServer(.init(identity: try sharedPKI.leaf()))
        defer { tlsServer.shutdown() }
        let asked = Gate()
        let never = Gate()
        let hooks = TLSHandshakeHooks(serverTrust: { _ in
            asked.open()
            await never.wait()
            return true
        })
        let task = Task {
            try await Connection.connect(
                host: "localhost",
                port: tlsServer.port,
                tls: trustingTestRoot(),
                hooks: hooks
            )
        }
        await asked.wait()
        task.cancel()
        let error = await #expect(throws: SesameError.self) { _ = try await task.value }
        #expect(error?.code == .cancelled)
        never.open()
    }

    @Test func aServerThatNeverSpeaksTLSTimesOut() async throws {
        let silent = try SilentTCPServer()
        defer { silent.stop() }
        var configuration = trustingTestRoot()
        configuration.handshakeTimeout = .milliseconds(300)
        let error = await #expect(throws: SesameError.self) {
            _ = try await Connection.connect(host: "127.0.0.1", port: silent.port, tls: configuration)
        }
        #expect(error?.code == .timeout)
    }

    @Test func aRefusedPortIsAConnectError() async throws {
        let port = LoopbackPort.unused()
        let error = await #expect(throws: SesameError.self) {
            _ = try await Connection.connect(host: "127.0.0.1", port: port, tls: trustingTestRoot())
        }
        #expect(error?.code == .connectFailed)
        #expect(error?.detail.contains("refused") == true)
    }

    /// The name's first label is longer than RFC 1035's 63 bytes: the system's resolver refuses it
    /// without asking a DNS server (traffic stays on this machine, and no server's slowness holds
    /// one of the lookup threads the other tests share).
    @Test func anUnknownHostIsANameResolutionError() async throws {
        let host = String(repeating: "n", count: 64) + ".invalid"
        let error = await #expect(throws: SesameError.self) {
            _ = try await Connection.connect(host: host, port: 443)
        }
        #expect(error?.code == .nameResolutionFailed)
    }

    @Test func largeBodiesArriveCompleteThroughSmallReads() async throws {
        let payload = String(repeating: "0123456789abcdef", count: 65_536)  // 1 MiB
        var server = LocalServer.Configuration(identity: try sharedPKI.leaf())
        server.handler = { _ in .text(payload) }
        let tlsServer = try LocalServer(server)
        defer { tlsServer.shutdown() }
        let connection = try await Connection.connect(
            host: "localhost",
            port: tlsServer.port,
            tls: trustingTestRoot()
        )
        try await connection.write(Array("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".utf8))
        var received = 0
        var head = true
        while received < payload.utf8.count {
            let chunk = try await connection.read(maxLength: 1000)
            #expect(!chunk.isEmpty)
            if chunk.isEmpty { break }
            if head, let end = String(decoding: chunk, as: UTF8.self).range(of: "\r\n\r\n") {
                received += String(decoding: chunk, as: UTF8.self)[end.upperBound...].utf8.count
                head = false
            } else {
                received += chunk.count
            }
        }
        await connection.close()
        #expect(received == payload.utf8.count)
    }
}

/// A one-shot signal for tests.
final class Gate: Sendable {
    private let state = LockedValue<(open: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    func open() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.open = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLock { state -> Bool in
                if state.open { return true }
                state.waiters.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
    }
}

/// A TCP listener that accepts and never writes.
final class SilentTCPServer: Sendable {
    let port: Int
    private let fd: Int32

    init() throws {
        fd = try LoopbackPort.bind()
        port = LoopbackPort.localPort(of: fd)
    }

    func stop() { close(fd) }
}

@Suite struct ConnectTimeoutTests {
    /// A listener whose accept queue is full drops further SYNs, so a connect to it never completes.
    @Test func aConnectThatNeverCompletesTimesOut() async throws {
        let fd = try LoopbackPort.bind(backlog: 0)
        defer { close(fd) }
        let port = LoopbackPort.localPort(of: fd)
        // Fill the accept queue with connections nobody accepts.
        let fillers = (0..<4).map { _ in LoopbackPort.connect(to: port, blocking: false).fd }
        defer {
            for filler in fillers { close(filler) }
        }
        // The queue is full once the kernel completed a filler's handshake.
        try #require(await eventually(within: .seconds(30)) { fillers.contains(where: Self.isConnected) })
        let error = await #expect(throws: SesameError.self) {
            _ = try await Connection.connect(
                host: "127.0.0.1",
                port: port,
                tls: trustingTestRoot(),
                connectTimeout: .milliseconds(300)
            )
        }
        #expect(error?.code == .connectTimeout)
    }

    /// Whether a non-blocking connect on `fd` completed.
    static func isConnected(_ fd: Int32) -> Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&descriptor, 1, 0) == 1 else { return false }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        return getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length) == 0 && error == 0
    }
}
