import FoundationEssentials

/// httpbin (the Python HTTP test service) under gunicorn on loopback, from the virtual
/// environment `scripts/install-deps.sh` makes (`.build/peers/httpbin-venv`, or
/// `$SESAME_HTTPBIN_VENV`).
public final class HttpbinServer: Sendable {
    /// The loopback port httpbin listens on.
    public let port: Int
    private let process: ChildProcess
    private let directory: URL

    /// `http://127.0.0.1:PORT`.
    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The virtual environment used: `$SESAME_HTTPBIN_VENV`, else `.build/peers/httpbin-venv` under
    /// the current directory (the package root under `swift test`).
    public static var virtualEnvironment: String {
        if let path = ProcessInfo.processInfo.environment["SESAME_HTTPBIN_VENV"], !path.isEmpty { return path }
        return FileManager.default.currentDirectoryPath + "/.build/peers/httpbin-venv"
    }

    /// Starts httpbin under gunicorn on a free loopback port and returns once it answers.
    /// - Throws: when the virtual environment of `scripts/install-deps.sh` is missing, or httpbin
    ///   does not start.
    public init() async throws {
        let python = Self.virtualEnvironment + "/bin/python"
        guard FileManager.default.isExecutableFile(atPath: python) else {
            throw TestingError(
                "httpbin is not installed at \(Self.virtualEnvironment): run scripts/install-deps.sh (it makes the virtual environment)"
            )
        }
        directory = try ScratchFolder.make("httpbin")
        let log = directory.appendingPathComponent("gunicorn.log").path
        var lastError: (any Error)?
        for _ in 0..<5 {
            let port = LoopbackPort.unused()
            let process = try ChildProcess(
                executable: python,
                arguments: [
                    "-m", "gunicorn", "--bind", "127.0.0.1:\(port)", "--workers", "2", "--log-level", "warning",
                    "httpbin:app",
                ],
                environment: ["PATH": "/usr/bin:/bin", "HOME": directory.path],
                logPath: log
            )
            if await LoopbackPort.waitUntilListening(
                [port],
                by: process.pid,
                timeout: .seconds(30),
                isAlive: { process.isRunning }
            ) {
                self.port = port
                self.process = process
                return
            }
            process.stop()
            lastError = TestingError("httpbin did not start: \(readText(log))")
        }
        throw lastError ?? TestingError("httpbin did not start")
    }

    /// Stops gunicorn and its workers.
    public func stop() {
        process.stop()
        try? FileManager.default.removeItem(at: directory)
    }
}
