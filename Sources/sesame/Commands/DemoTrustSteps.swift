import FoundationEssentials
import Glibc
import Sesame
import SesameTesting

/// The demo's server-trust steps: asynchronous decisions, default handling, a bundled
/// certificate, pinning, and resumed sessions.
enum DemoTrustSteps {
    static func serverTrust(_ demo: DemoContext) async throws {
        let server = try LocalServer(.init(identity: try demo.pki.leaf()))
        defer { server.shutdown() }
        let hooks = TLSHandshakeHooks(serverTrust: { request in
            demo.say("challenge: server trust for \(request.host):\(request.port), chain:")
            for certificate in request.peerChain {
                demo.say("    \(certificate.subject)  pin sha256/\(certificate.publicKey.sha256Pin)")
            }
            try? await Task.sleep(for: .milliseconds(300))  // a slow delegate: the handshake waits
            let evaluation = request.evaluate()
            demo.say("delegate evaluated against the private anchor: \(evaluation); answering after 300 ms")
            return evaluation.isTrusted
        })
        let connection = try await Connection.connect(
            host: "localhost",
            port: server.port,
            tls: demo.privateAnchorConfiguration,
            hooks: hooks
        )
        let body = try await request(connection)
        demo.say(
            "connected: \(connection.tlsInfo.map(String.init(describing:)) ?? "plain TCP"); response: \(body.split(separator: "\n").first ?? "")"
        )
        try expect(body.hasPrefix("hello"), "unexpected response \(body)")
    }

    static func untrusted(_ demo: DemoContext) async throws {
        let server = try LocalServer(.init(identity: try demo.pki.untrustedLeaf()))
        defer { server.shutdown() }
        do {
            _ = try await Connection.connect(
                host: "localhost",
                port: server.port,
                tls: demo.privateAnchorConfiguration
            )
            throw DemoFailure("an untrusted server was accepted")
        } catch let error as SesameError {
            demo.say("rejected: \(error)")
            try expect(error.code == .serverTrustRejected, "wrong error \(error)")
        }
        let records = await server.finishedConnections(atLeast: 1)
        let received = records.map(\.applicationBytesReceived).reduce(0, +)
        demo.say("application bytes the server received: \(received)")
        try expect(received == 0, "the server received \(received) bytes")
    }

    static func bundledCertificate(_ demo: DemoContext) async throws {
        let selfSigned = try demo.pki.selfSignedLeaf()
        let server = try LocalServer(.init(identity: selfSigned))
        defer { server.shutdown() }
        // The certificate an app would ship in its bundle.
        let bundledPath = demo.directory.appendingPathComponent("server.cer").path
        try selfSigned.certificate.derEncoded.write(to: URL(fileURLWithPath: bundledPath))
        let bundled = try Certificate.load(contentsOf: bundledPath)
        demo.say(
            "bundled certificate: \(bundled[0].subject), sha256 \(bundled[0].sha256Fingerprint.base64EncodedString())"
        )
        let hooks = TLSHandshakeHooks(serverTrust: { request in
            let matches = request.peerChain.first.map { bundled.contains($0) } ?? false
            demo.say(
                "server sent \(request.peerChain.first?.subject.description ?? "nothing"): "
                    + (matches ? "same as bundled, accepting" : "different, rejecting")
            )
            return matches
        })
        let connection = try await Connection.connect(host: "localhost", port: server.port, hooks: hooks)
        let body = try await request(connection)
        try expect(body.hasPrefix("hello"), "unexpected response \(body)")
    }

    static func pinning(_ demo: DemoContext) async throws {
        let server = try LocalServer(.init(identity: try demo.pki.leaf()))
        defer { server.shutdown() }
        let intermediatePin = "sha256/" + demo.pki.intermediate.certificate.publicKey.sha256Pin
        let backupPin = "sha256/" + Data(repeating: 0x42, count: 32).base64EncodedString()
        let reports = LockedValue<[String]>([])
        let pins = try PinSet(
            [.init(host: "localhost", pins: [intermediatePin, backupPin])],
            report: { report in reports.withLock { $0.append(report.json) } }
        )
        var configuration = SessionConfiguration.default
        configuration.tls = demo.privateAnchorConfiguration
        configuration.serverTrustManager = ServerTrustManager(evaluators: ["localhost": pins])
        let (_, response) = try await Session(configuration: configuration)
            .data(from: try demo.url(port: server.port, path: "/"))
        demo.say("pinned to the intermediate's key \(intermediatePin.prefix(20))…: \(response.status)")
        try expect(response.status == 200, "status \(response.status)")

        // The server rotates to a key from another CA: the same pins refuse it, and a report goes out.
        let rotated = try LocalServer(.init(identity: try demo.pki.untrustedLeaf()))
        defer { rotated.shutdown() }
        var rotatedConfiguration = configuration
        rotatedConfiguration.tls.trustRoots = .anchors([demo.pki.root.certificate, demo.pki.untrustedRoot.certificate])
        do {
            _ = try await Session(configuration: rotatedConfiguration)
                .data(from: try demo.url(port: rotated.port, path: "/"))
            throw DemoFailure("a rotated key passed the pins")
        } catch let error as SesameError {
            demo.say("rotated key: \(error)")
            try expect(error.code == .serverTrustRejected, "wrong error \(error)")
        }
        let report = reports.withLock { $0.last } ?? ""
        demo.say("pin failure report: \(report.prefix(160))…")
        try expect(!report.isEmpty, "no report")
    }

    static func resumption(_ demo: DemoContext) async throws {
        let server = try LocalServer(.init(identity: try demo.pki.leaf()))
        defer { server.shutdown() }
        var configuration = demo.privateAnchorConfiguration
        configuration.applicationProtocols = ["sesame-demo"]  // a context (and session cache) of its own
        for attempt in 1...2 {
            let hooks = TLSHandshakeHooks(serverTrust: { request in
                demo.say("connection \(attempt): trust decision asked (resumed session: \(request.isResumedSession))")
                return request.evaluate().isTrusted
            })
            let connection = try await Connection.connect(
                host: "localhost",
                port: server.port,
                tls: configuration,
                hooks: hooks
            )
            _ = try await request(connection)
            demo.say("connection \(attempt): \(connection.tlsInfo.map(String.init(describing:)) ?? "plain TCP")")
            if attempt == 2 {
                try expect(connection.tlsInfo?.isSessionReused == true, "the second connection did not resume")
            }
        }
    }

    /// One HTTP/1.1 request; returns the body.
    static func request(_ connection: Connection) async throws -> String {
        try await connection.write(
            Array("GET / HTTP/1.1\r\nHost: \(connection.host)\r\nConnection: close\r\n\r\n".utf8)
        )
        var received: [UInt8] = []
        while true {
            let chunk = try await connection.read()
            if chunk.isEmpty { break }
            received += chunk
            let text = String(decoding: received, as: UTF8.self)
            if let end = text.firstRange(of: "\r\n\r\n"),
                let lengthLine = text[..<end.lowerBound].split(separator: "\r\n").first(where: {
                    $0.lowercased().hasPrefix("content-length:")
                }),
                let length = Int(lengthLine.split(separator: ":")[1].trimmingWhitespace()),
                text[end.upperBound...].utf8.count >= length
            {
                await connection.close()
                return String(text[end.upperBound...])
            }
        }
        await connection.close()
        return ""
    }
}
