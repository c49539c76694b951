import FoundationEssentials
import Glibc

/// `nghttpd` (Debian's `nghttp2-server`), nghttp2's own HTTP/2 server, on loopback: without TLS
/// HTTP/2 with prior knowledge (h2c), with `tls` over TLS with ALPN `h2` only. It serves `files`
/// from a scratch folder, and with `echoUpload` answers a request with a body by sending that
/// body back.
public final class NghttpdServer: Sendable {
    /// The loopback port nghttpd listens on.
    public let port: Int
    private let process: ChildProcess
    private let directory: URL

    /// - Parameters:
    ///   - files: paths under the document root (such as "big.bin") and their contents.
    ///   - windowBits: the stream window nghttpd grants, 2^bits − 1 bytes (its `-w`); nil: its default.
    ///   - maxConcurrentStreams: the streams one connection may have open at once (its `-m`).
    ///   - echoUpload: answer a request with a body by sending that body back (its `--echo-upload`).
    ///   - tls: the certificate (with its chain) and key to serve over TLS; nil: plain h2c.
    ///   - requiresClientCertificate: over TLS, ask for a client certificate and refuse the
    ///     handshake without one (`--verify-client`; nghttpd does not check who issued it).
    ///   - trailers: fields sent in a trailing HEADERS frame after every response that has a body
    ///     (its `--trailer`).
    public init(
        files: [String: [UInt8]] = [:],
        windowBits: Int? = nil,
        maxConcurrentStreams: Int? = nil,
        echoUpload: Bool = false,
        tls: TestIssuedCertificate? = nil,
        requiresClientCertificate: Bool = false,
        trailers: [(String, String)] = []
    ) async throws {
        let executable = "/usr/sbin/nghttpd"
        guard FileManager.default.isExecutableFile(atPath: executable) else {
            throw TestingError("nghttpd is not installed: run scripts/install-deps.sh (Debian's nghttp2-server)")
        }
        directory = try ScratchFolder.make("nghttpd")
        let root = directory.appendingPathComponent("htdocs")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        for (path, bytes) in files { try Data(bytes).write(to: root.appendingPathComponent(path)) }
        let log = directory.appendingPathComponent("nghttpd.log").path
        var keyAndCertificate: [String]?
        if let tls {
            let (certificate, key) = try tls.write(to: directory, name: "server")
            keyAndCertificate = [key, certificate]
        }
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = LoopbackPort.unused()
            var arguments = ["-a", "127.0.0.1", "-d", root.path]
            if keyAndCertificate == nil { arguments.append("--no-tls") }
            if requiresClientCertificate { arguments.append("--verify-client") }
            if let windowBits { arguments.append("--window-bits=\(windowBits)") }
            if let maxConcurrentStreams { arguments.append("--max-concurrent-streams=\(maxConcurrentStreams)") }
            if echoUpload { arguments.append("--echo-upload") }
            arguments += trailers.map { "--trailer=\($0.0): \($0.1)" }
            let process = try ChildProcess(
                executable: executable,
                arguments: arguments + [String(port)] + (keyAndCertificate ?? []),
                environment: ["PATH": "/usr/bin:/bin", "HOME": directory.path],
                logPath: log
            )
            if await LoopbackPort.waitUntilListening([port], by: process.pid, isAlive: { process.isRunning }) {
                self.port = port
                self.process = process
                return
            }
            process.stop()
            lastError = TestingError("nghttpd did not start: \(readText(log))")
        }
        throw lastError ?? TestingError("nghttpd did not start")
    }

    /// Stops nghttpd and removes its files.
    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
