import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// `openssl s_server` on loopback, started and stopped by a test, with its log kept for assertions.
final class OpenSSLServer: Sendable {
    let port: Int
    let logPath: String
    private let process: ChildProcess

    enum Version: String, Sendable {
        case tls12 = "-tls1_2"
        case tls13 = "-tls1_3"
    }

    /// Starts `openssl s_server -www` with a leaf from `pki`; `requireClientCertificate` adds
    /// `-Verify 1 -CAfile <client CA>`.
    init(pki: TestPKI, version: Version, requireClientCertificate: Bool) async throws {
        guard
            let openssl = ["/usr/bin/openssl", "/usr/local/bin/openssl"].first(
                where: FileManager.default.isExecutableFile(atPath:)
            )
        else {
            throw SesameError(
                .fileUnreadable,
                "openssl is not installed: the README test command installs the Debian package 'openssl'"
            )
        }
        let directory = try ScratchFolder.make("s_server")
        let leaf = try pki.leaf()
        let (certificate, key) = try leaf.write(to: directory, name: "server")
        // s_server sends only the first certificate of -cert; the intermediate goes in -cert_chain.
        let chain = directory.appendingPathComponent("chain.pem").path
        try Data(leaf.intermediates.map(\.pemEncoded).joined().utf8).write(to: URL(fileURLWithPath: chain))
        let clientCA = directory.appendingPathComponent("client-ca.pem").path
        try Data(pki.clientCA.certificatePEM.utf8).write(to: URL(fileURLWithPath: clientCA))
        logPath = directory.appendingPathComponent("s_server.log").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)

        var lastError: (any Error)? = nil
        for _ in 0..<5 {
            let port = LoopbackPort.unused()
            var arguments = [
                "s_server", "-accept", "127.0.0.1:\(port)", "-cert", certificate, "-key", key, "-cert_chain", chain,
                "-www", version.rawValue,
                "-naccept", "64",
            ]
            // Without -verify_return_error s_server logs a bad client certificate and carries on.
            if requireClientCertificate { arguments += ["-Verify", "1", "-verify_return_error", "-CAfile", clientCA] }
            let process = try ChildProcess(
                executable: openssl,
                arguments: arguments,
                environment: ["OPENSSL_CONF": "/dev/null", "PATH": "/usr/bin:/bin"],
                logPath: logPath
            )
            // s_server logs and ignores the probing connections, which send nothing.
            if await LoopbackPort.waitUntilListening([port], by: process.pid, isAlive: { process.isRunning }) {
                self.port = port
                self.process = process
                return
            }
            process.stop()
            lastError = SesameError(
                .connectFailed,
                "openssl s_server did not start on port \(port): \(readText(logPath))"
            )
        }
        throw lastError ?? SesameError(.connectFailed, "openssl s_server did not start")
    }

    var log: String { readText(logPath) }

    func stop() { process.stop() }

}
