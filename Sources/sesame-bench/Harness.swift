import Foundation
import Sesame
import SesameTesting

/// Starts nginx, builds the libcurl driver, runs every workload for every client (interleaved,
/// several times), and renders the results as Markdown.
struct Harness {
    let repetitions: Int
    /// Runs only the workloads whose name contains this.
    var only: String? = nil
    /// Runs each client on a processor of its own, the peers on the others (`CPUPlacement`).
    var separatesClients = true

    struct Workload {
        let name: String
        let mode: String
        let count: Int
        let path: String
        let concurrency: Int
        let systemStore: Bool
        /// `basic:USER:PASSWORD` or `digest:USER:PASSWORD`.
        var auth: String? = nil
        /// Digest runs against Apache (nginx has no Digest module), over http.
        var onApache = false
        /// POSTs a 1 GiB sparse file as a multipart form field instead of a GET.
        var uploadsFile = false
        /// Requires the server's public key to match a pin.
        var pinned = false
        /// Presents a client certificate to nginx's mutual-TLS port.
        var mutualTLS = false
        /// Goes through squid (Basic proxy authentication, a CONNECT tunnel).
        var throughProxy = false
        /// Sesame runs its request loop on the session's event loop (`withTaskExecutorPreference`).
        var onLoop = false
        /// Over HTTP/2 (nginx's `http2` port: ALPN h2), streams multiplexed on one connection.
        var http2 = false
        var flags: Flags {
            Flags(
                upload: uploadsFile,
                pinned: pinned,
                mutualTLS: mutualTLS,
                proxy: throughProxy,
                onLoop: onLoop,
                http2: http2
            )
        }
    }

    enum Client: String, CaseIterable {
        case sesame = "Sesame"
        case libcurl = "libcurl multi"
        case curl = "curl CLI"
        /// A load generator for concurrent workloads (`Harness+Tools.swift`), not a client compared.
        case h2load = "h2load (load generator)"
    }

    struct Sample {
        let wall: Double
        let cpu: Double
        let peakRSS: Int
        var roundTrips = 0.0
        /// Processor seconds nginx ran during the sample (nil on Apache, or where /proc does not tell).
        var serverCPU: Double?
    }

    static let workloads = [
        Workload(
            name: "keep-alive GET ×2000",
            mode: "keepalive",
            count: 2000,
            path: "/small.txt",
            concurrency: 1,
            systemStore: false
        ),
        Workload(
            name: "keep-alive GET ×2000, Sesame's loop on its event loop",
            mode: "keepalive",
            count: 2000,
            path: "/small.txt",
            concurrency: 1,
            systemStore: false,
            onLoop: true
        ),
        Workload(
            name: "new connection ×200, private CA",
            mode: "newconn",
            count: 200,
            path: "/small.txt",
            concurrency: 1,
            systemStore: false
        ),
        Workload(
            name: "new connection ×200, system store",
            mode: "newconn",
            count: 200,
            path: "/small.txt",
            concurrency: 1,
            systemStore: true
        ),
        Workload(
            name: "64 concurrent, GET ×2000",
            mode: "concurrent",
            count: 2000,
            path: "/small.txt",
            concurrency: 64,
            systemStore: false
        ),
        Workload(
            name: "64 concurrent, GET ×2000, Sesame's tasks on its event loop",
            mode: "concurrent",
            count: 2000,
            path: "/small.txt",
            concurrency: 64,
            systemStore: false,
            onLoop: true
        ),
        Workload(
            name: "HTTP/2: 64 concurrent, GET ×2000",
            mode: "concurrent",
            count: 2000,
            path: "/small.txt",
            concurrency: 64,
            systemStore: false,
            http2: true
        ),
        Workload(
            name: "HTTP/2: keep-alive GET ×2000",
            mode: "keepalive",
            count: 2000,
            path: "/small.txt",
            concurrency: 1,
            systemStore: false,
            http2: true
        ),
        Workload(
            name: "HTTP/2: keep-alive GET ×2000, Sesame's loop on its event loop",
            mode: "keepalive",
            count: 2000,
            path: "/small.txt",
            concurrency: 1,
            systemStore: false,
            onLoop: true,
            http2: true
        ),
        Workload(
            // 200: at 20 a run took about 50 ms, too short for this machine's noise.
            name: "1 MiB GET ×200",
            mode: "keepalive",
            count: 200,
            path: "/large.bin",
            concurrency: 1,
            systemStore: false
        ),
        Workload(
            name: "Basic GET ×2000 (nginx, https)",
            mode: "keepalive",
            count: 2000,
            path: "/basic/ok",
            concurrency: 1,
            systemStore: false,
            auth: "basic:user:passwd"
        ),
        Workload(
            name: "Digest MD5 GET ×2000 (Apache, http)",
            mode: "keepalive",
            count: 2000,
            path: "/digest/ok.txt",
            concurrency: 1,
            systemStore: false,
            auth: "digest:user:passwd",
            onApache: true
        ),
        Workload(
            name: "multipart upload of a 1 GiB sparse file ×1",
            mode: "keepalive",
            count: 1,
            path: "/upload",
            concurrency: 1,
            systemStore: false,
            uploadsFile: true
        ),
        Workload(
            name: "pinned public key, GET ×2000",
            mode: "keepalive",
            count: 2000,
            path: "/small.txt",
            concurrency: 1,
            systemStore: false,
            pinned: true
        ),
        Workload(
            name: "client certificate (mTLS), new connection ×200",
            mode: "newconn",
            count: 200,
            path: "/",
            concurrency: 1,
            systemStore: false,
            mutualTLS: true
        ),
        Workload(
            name: "through squid (Basic, CONNECT), GET ×2000",
            mode: "keepalive",
            count: 2000,
            path: "/small.txt",
            concurrency: 1,
            systemStore: false,
            throughProxy: true
        ),
    ]

    func run() async throws -> String {
        // First: the peers started below inherit where this process runs.
        let clientCPU = separatesClients ? try CPUPlacement.separateClients() : nil
        let pki = try TestPKI()
        let nginx = try await NginxServer(pki: pki)
        defer { nginx.stop() }
        let apache = try await ApacheServer()
        defer { apache.stop() }
        let scratch = nginx.prefix
        let root = scratch.appendingPathComponent("root.pem").path
        try Data(pki.root.certificatePEM.utf8).write(to: URL(fileURLWithPath: root))
        // The system bundle plus the test root: what "the system store" means for every client here.
        let systemBundle = (try? Data(contentsOf: URL(fileURLWithPath: "/etc/ssl/certs/ca-certificates.crt"))) ?? Data()
        let combined = scratch.appendingPathComponent("system-plus-root.pem").path
        try (systemBundle + Data(pki.root.certificatePEM.utf8)).write(to: URL(fileURLWithPath: combined))
        let driver = try buildDriver(in: scratch)
        // A sparse file: 1 GiB long, no disk blocks; memory use shows whether a client streams it.
        let sparse = scratch.appendingPathComponent("sparse-1GiB.bin").path
        guard FileManager.default.createFile(atPath: sparse, contents: nil),
            let handle = FileHandle(forWritingAtPath: sparse)
        else { throw BenchmarkError("cannot create \(sparse)") }
        try handle.truncate(atOffset: 1 << 30)
        try handle.close()
        let squid = try await SquidProxy(scheme: .basic)
        defer { squid.stop() }
        let client = try pki.clientCertificate(commonName: "bench-client")
        let (clientCertificate, clientKey) = try client.write(to: scratch, name: "bench-client")
        let serverLeaf = try Certificate.load(contentsOf: scratch.appendingPathComponent("server.pem").path)
        guard let leafKey = serverLeaf.first?.publicKey else { throw BenchmarkError("no server certificate to pin") }
        let extras = Extras(
            sparseFile: sparse,
            pin: "sha256//" + leafKey.sha256Pin,  // the leaf's key: what curl's --pinnedpubkey checks
            clientCertificate: clientCertificate,
            clientKey: clientKey,
            proxy: "http://puser:ppass@127.0.0.1:\(squid.port)",
            clientCPU: clientCPU
        )
        // Sesame's client is a program of its own that imports Sesame alone (no Foundation),
        // built beside this one.
        let worker = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("sesame-bench-worker").path
        guard FileManager.default.isExecutableFile(atPath: worker) else {
            throw BenchmarkError("\(worker) is not built: swift build -c release --product sesame-bench-worker")
        }
        FileHandle.standardError.write(
            Data(
                ("sesame-bench: nginx on 127.0.0.1:\(nginx.httpsPort), \(repetitions) repetitions, "
                    + (clientCPU.map { "clients on processor \($0), peers on the others\n" } ?? "shared processors\n"))
                    .utf8
            )
        )

        var results: [String: [Client: [Sample]]] = [:]
        for workload in Self.workloads where only.map({ workload.name.contains($0) }) ?? true {
            let port =
                workload.mutualTLS
                ? nginx.trustCasePorts["client-certificate"] ?? 0 : workload.http2 ? nginx.http2Port : nginx.httpsPort
            let url =
                workload.onApache
                ? "\(apache.baseURL)\(workload.path)" : "https://localhost:\(port)\(workload.path)"
            let ca = workload.systemStore ? combined : root
            // Requests the server saw: round trips per request come from its access log.
            let served = {
                workload.onApache ? apache.accessLog.count : nginx.accessLogCount
            }
            for repetition in 1...repetitions {
                // Sesame and libcurl take turns going first, so that neither always runs right
                // after the curl CLI (or the previous workload) and a drift in the machine's load
                // within a repetition does not favour one of them.
                let order: [Client] =
                    repetition % 2 == 1 ? [.sesame, .libcurl, .curl, .h2load] : [.libcurl, .sesame, .curl, .h2load]
                for client in order {
                    var sample: Sample
                    let before = served()
                    let serverBefore = workload.onApache ? nil : nginx.processorSeconds
                    switch client {
                    case .sesame:
                        var arguments = [
                            workload.mode, String(workload.count), url, root, String(workload.concurrency),
                        ]
                        if workload.systemStore { arguments.append("--system") }
                        sample = try measureReporting(
                            driver,
                            [worker] + arguments,
                            auth: workload.auth,
                            extra: extras.environment(workload.flags),
                            in: scratch
                        )
                    case .libcurl:
                        sample = try measureReporting(
                            driver,
                            [driver, workload.mode, String(workload.count), url, ca, String(workload.concurrency)],
                            auth: workload.auth,
                            extra: extras.environment(workload.flags),
                            in: scratch
                        )
                    case .h2load:
                        guard
                            let ceiling = try measureH2Load(
                                workload,
                                url: url,
                                driver: driver,
                                environment: extras.placement,
                                in: scratch
                            )
                        else { continue }
                        sample = ceiling
                    case .curl:
                        sample = try measureCurl(
                            workload,
                            url: url,
                            ca: ca,
                            driver: driver,
                            extra: extras.curlArguments(workload.flags),
                            environment: extras.placement,
                            in: scratch
                        )
                    }
                    // Before the pause: nginx writes its log lines meanwhile, after the run.
                    if let serverBefore, let serverAfter = nginx.processorSeconds {
                        sample.serverCPU = serverAfter - serverBefore
                    }
                    try await Task.sleep(for: .milliseconds(200))  // logs are written after the response
                    sample.roundTrips = Double(served() - before) / Double(workload.count)
                    results[workload.name, default: [:]][client, default: []].append(sample)
                    FileHandle.standardError.write(
                        Data(
                            "  \(workload.name) #\(repetition) \(client.rawValue): \(String(format: "%.0f", Double(workload.count) / sample.wall)) req/s\n"
                                .utf8
                        )
                    )
                }
            }
        }
        var sections = results.isEmpty ? [] : [render(results, clientCPU: clientCPU)]
        if only.map({ Self.coldStartName.contains($0) }) ?? true {
            sections.append(try coldStart(nginx: nginx, root: root, driver: driver, extras: extras, in: scratch))
        }
        return sections.joined(separator: "\n\n")
    }

    static let coldStartName = "cold GET"

    /// The `sesame` command and the curl CLI, one GET per process (`ColdStartBenchmark`), over
    /// https with the test root as the trust file and over plain http.
    private func coldStart(
        nginx: NginxServer,
        root: String,
        driver: String,
        extras: Extras,
        in scratch: URL
    ) throws -> String {
        let command = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent("sesame").path
        guard FileManager.default.isExecutableFile(atPath: command) else {
            throw BenchmarkError("\(command) is not built: swift build -c release --product sesame")
        }
        let benchmark = ColdStartBenchmark(
            driver: driver,
            sesame: command,
            runs: max(repetitions * 8, 20),
            environment: extras.placement,
            directory: scratch
        )
        let rows = try benchmark.measure([
            .init(
                name: "https, one trust file",
                url: "https://localhost:\(nginx.httpsPort)/small.txt",
                trustFile: root
            ),
            .init(name: "plain http", url: "http://localhost:\(nginx.httpPort)/small.txt", trustFile: nil),
        ])
        return
            (rows + [
                "",
                "Cold GET: one request from a process started for it, the `sesame` command (release build) "
                    + "against the curl CLI, the same URL and trust file; the two run back to back, taking turns "
                    + "going first. Wall time around the spawn, CPU and peak memory from wait4, start-up and exit "
                    + "included.",
            ]).joined(separator: "\n")
    }

    private func buildDriver(in directory: URL) throws -> String {
        let source = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Benchmarks/libcurl-driver.c").path
        let binary = directory.appendingPathComponent("libcurl-driver").path
        let log = directory.appendingPathComponent("cc.log").path
        let command = "cc -O2 -o '\(binary)' '\(source)' $(pkg-config --cflags --libs libcurl)"
        let compiler = try ChildProcess(
            executable: "/bin/sh",
            arguments: ["-c", command],
            environment: ["PATH": "/usr/bin:/bin"],
            logPath: log
        )
        guard compiler.wait() == 0 else {
            let output = readText(log)
            throw BenchmarkError("building the libcurl driver failed (Debian package libcurl4-openssl-dev?): \(output)")
        }
        return binary
    }

    /// Runs a client (through the driver's `spawn`) that reports its own "wall cpu bytes".
    private func measureReporting(
        _ driver: String,
        _ command: [String],
        auth: String?,
        extra: [String: String],
        in directory: URL
    ) throws -> Sample {
        let out = directory.appendingPathComponent("out-\(UUID().uuidString)").path
        var environment = ["PATH": "/usr/bin:/bin"].merging(extra) { _, new in new }
        if let auth { environment["SESAME_BENCH_AUTH"] = auth }
        let child = try ChildProcess(
            executable: driver,
            arguments: ["spawn"] + command,
            environment: environment,
            logPath: out,
            errorPath: out + ".err"
        )
        let status = child.wait()
        let text = readText(out)
        let errors = readText(out + ".err")
        let fields = text.split(separator: " ").map { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard status == 0, fields.count == 3, let wall = fields[0], let cpu = fields[1] else {
            throw BenchmarkError("\(command.joined(separator: " ")) failed (\(status)): \(errors)")
        }
        return Sample(wall: wall, cpu: cpu, peakRSS: Self.peakRSS(errors))
    }

    /// The "peak-rss-kb N" line the driver's `spawn` prints.
    static func peakRSS(_ text: String) -> Int {
        for line in text.split(separator: "\n") where line.hasPrefix("peak-rss-kb ") {
            return Int(line.dropFirst("peak-rss-kb ".count)) ?? 0
        }
        return 0
    }
}
