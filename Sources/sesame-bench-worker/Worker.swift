import FoundationEssentials
import Glibc
import Sesame

/// Sesame's side of a workload, run in a process of its own so that its CPU time and peak memory
/// are measured the same way as libcurl's. It imports Sesame and FoundationEssentials only, as a
/// program built on Sesame's API would: its peak memory is what such a program costs.
///
/// usage: sesame-bench-worker keepalive|newconn|concurrent COUNT URL CAFILE [CONCURRENCY] [--system]
enum Worker {
    static func run(_ arguments: [String]) async -> Int32 {
        guard arguments.count >= 4, let count = Int(arguments[1]), let url = URL(string: arguments[2]) else {
            report("usage: sesame-bench-worker MODE COUNT URL CAFILE [CONCURRENCY] [--system]")
            return 2
        }
        let mode = arguments[0]
        let concurrency = arguments.count > 4 ? Int(arguments[4]) ?? 1 : 1
        do {
            let anchors = try Certificate.load(contentsOf: arguments[3])
            var configuration = SessionConfiguration.default
            configuration.tls.trustRoots =
                arguments.contains("--system") ? .system(adding: anchors) : .anchors(anchors)
            configuration.maximumConnectionsPerHost = concurrency
            if mode == "newconn" {
                // As libcurl is run: a new connection and a full handshake (no resumption) each time.
                configuration.tls.sessionResumption = false
            }
            configuration.credentialStorage = nil
            configuration.proxy = .none
            let environment = ProcessInfo.processInfo.environment
            // The same switches as the libcurl driver's.
            if let pin = environment["SESAME_BENCH_PIN"] {
                configuration.securityPolicy = nil
                configuration.serverTrustManager = ServerTrustManager(
                    allHostsMustBeEvaluated: false,
                    evaluators: [:],
                    defaultEvaluator: try PublicKeyPinsTrustEvaluator(pins: [pin])
                )
            }
            if let certificate = environment["SESAME_BENCH_CERT"], let key = environment["SESAME_BENCH_KEY"] {
                configuration.clientIdentities = ["*": try Identity.load(certificateFile: certificate, keyFile: key)]
            }
            // HTTP/2 is Sesame's default where ALPN picks it; SESAME_BENCH_HTTP2 only says the
            // workload expects it, and the worker checks that it got it.
            let version = environment["SESAME_BENCH_HTTP2"] != nil ? "HTTP/2" : nil
            if let proxy = environment["SESAME_BENCH_PROXY"] { configuration.proxy = ProxyConfiguration(proxy: proxy) }
            var delegate: (any SessionTaskDelegate)? = nil
            // SESAME_BENCH_AUTH=basic:USER:PASSWORD or digest:USER:PASSWORD, as for the libcurl driver.
            if let auth = ProcessInfo.processInfo.environment["SESAME_BENCH_AUTH"] {
                let parts = auth.split(separator: ":", maxSplits: 2).map(String.init)
                guard parts.count == 3 else { throw WorkerError("SESAME_BENCH_AUTH is SCHEME:USER:PASSWORD") }
                configuration.authenticationMethods = [parts[0] == "digest" ? .httpDigest : .httpBasic]
                configuration.allowsCleartextPasswords = true
                delegate = Login(Credential(user: parts[1], password: parts[2], persistence: .forSession))
            }
            let session = Session(configuration: configuration, delegate: delegate)
            var template = HTTPRequest(url: url)
            // SESAME_BENCH_UPLOAD=FILE: POST it as the multipart field "file", streamed from disk.
            if let upload = ProcessInfo.processInfo.environment["SESAME_BENCH_UPLOAD"] {
                template = try HTTPRequestSerializer().multipartRequest(url: url) { form in
                    try form.appendFile(at: URL(fileURLWithPath: upload), name: "file")
                }
            }
            if mode == "newconn" { template.headers.add(name: "Connection", value: "close") }
            let request = template
            let startWall = ContinuousClock.now
            let startCPU = cpuSeconds()
            let work: @Sendable () async throws -> Int = {
                guard mode == "concurrent" else {
                    return try await fetch(session, request, times: count, version: version)
                }
                return try await withThrowingTaskGroup(of: Int.self) { group in
                    for worker in 0..<concurrency {
                        let share = count / concurrency + (worker < count % concurrency ? 1 : 0)
                        group.addTask { try await fetch(session, request, times: share, version: version) }
                    }
                    return try await group.reduce(0, +)
                }
            }
            // SESAME_BENCH_ON_LOOP: the documented fast path, the requests run on the session's
            // event loop (child tasks inherit the preference).
            let bytes =
                environment["SESAME_BENCH_ON_LOOP"] != nil
                ? try await withTaskExecutorPreference(session.eventLoop, operation: work) : try await work()
            let wall = ContinuousClock.now - startWall
            let cpu = cpuSeconds() - startCPU
            print("\(wall.seconds) \(cpu) \(bytes)")
            return 0
        } catch {
            report("sesame worker: \(error)")
            return 1
        }
    }

    /// `version`: the protocol every response must have come over.
    private static func fetch(
        _ session: Session,
        _ request: HTTPRequest,
        times: Int,
        version: String?
    ) async throws -> Int {
        var bytes = 0
        for _ in 0..<times {
            let (data, response) = try await session.data(for: request)
            guard response.status == 200 else { throw WorkerError("status \(response.status)") }
            if let version, response.version != version {
                throw WorkerError("\(response.version), not \(version)")
            }
            bytes += data.count
        }
        return bytes
    }
}

/// Answers password challenges with one credential; server trust reaches a task-level method too
/// (Apple's rule) and goes to default handling.
final class Login: SessionTaskDelegate {
    let credential: Credential
    init(_ credential: Credential) { self.credential = credential }
    func session(
        _ session: Session,
        task: SessionTask,
        didReceive challenge: AuthenticationChallenge
    ) async -> (AuthChallengeDisposition, Credential?) {
        challenge.protectionSpace.authenticationMethod.usesPassword
            ? (.useCredential, credential) : (.performDefaultHandling, nil)
    }
}

/// Writes `line` to standard error.
func report(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
}

func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(Int32(RUSAGE_SELF.rawValue), &usage)
    return usage.ru_utime.seconds + usage.ru_stime.seconds
}

extension timeval {
    var seconds: Double { Double(tv_sec) + Double(tv_usec) / 1e6 }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

struct WorkerError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
