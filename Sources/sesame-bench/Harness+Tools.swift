import Foundation
import SesameTesting

// The command-line tools measured beside Sesame and libcurl: the curl CLI, and for a concurrent
// workload h2load (nghttp2's load generator) against the same port with the same count and
// concurrency, on the clients' processor.
extension Harness {
    /// Runs the curl CLI with every URL of the workload in one invocation; wall time from here,
    /// CPU and peak RSS from wait4 (process start-up included).
    func measureCurl(
        _ workload: Workload,
        url: String,
        ca: String,
        driver: String,
        extra: [String],
        environment: [String: String],
        in directory: URL
    ) throws
        -> Sample
    {
        var arguments = ["-s", "-S", "--fail", "--compressed", "--cacert", ca, "--capath", "/nonexistent"] + extra
        if workload.mode == "newconn" { arguments += ["-H", "Connection: close", "--no-sessionid"] }
        if let auth = workload.auth {
            let parts = auth.split(separator: ":", maxSplits: 1).map(String.init)
            arguments += [parts[0] == "digest" ? "--digest" : "--basic", "-u", parts[1]]
        }
        if workload.mode == "concurrent" {
            arguments += ["--parallel", "--parallel-max", String(workload.concurrency), "--parallel-immediate"]
        }
        for _ in 0..<workload.count { arguments += [url, "-o", "/dev/null"] }
        let start = ContinuousClock.now
        let log = directory.appendingPathComponent("curl-\(UUID().uuidString).log").path
        let child = try ChildProcess(
            executable: driver,
            arguments: ["spawn", "/usr/bin/curl"] + arguments,
            environment: environment,
            logPath: log
        )
        let (status, usage) = child.waitWithUsage()
        let wall = (ContinuousClock.now - start).seconds
        let output = readText(log)
        guard status == 0 else { throw BenchmarkError("curl failed (\(status)): \(output)") }
        // CPU of the driver and curl together; the driver only waits.
        return Sample(wall: wall, cpu: usage.ru_utime.seconds + usage.ru_stime.seconds, peakRSS: Self.peakRSS(output))
    }

    /// Where h2load is (Debian's `nghttp2-client`); nil when it is not installed.
    static let h2loadPath: String? = {
        let path = "/usr/bin/h2load"
        return FileManager.default.isExecutableFile(atPath: path) ? path : nil
    }()

    /// Runs h2load once: HTTP/1.1 with one connection per concurrent request (`--h1 -c N`), or
    /// HTTP/2 with the requests multiplexed on one connection (`-c 1 -m N`), as the clients do.
    /// h2load checks no certificate and keeps no body; it is not a client to compare with, nor the
    /// server's ceiling: on one processor it is bound by that processor as the clients are (its
    /// processor time matched its wall time, with nginx busy 75 % of it); the "server busy"
    /// column says how close to its ceiling the server was. Wall time is h2load's own
    /// ("finished in"), CPU and peak memory those of its process (start-up included).
    func measureH2Load(
        _ workload: Workload,
        url: String,
        driver: String,
        environment: [String: String],
        in directory: URL
    ) throws -> Sample? {
        guard let h2load = Self.h2loadPath, workload.mode == "concurrent", !workload.onApache else { return nil }
        var arguments = ["-n", String(workload.count)]
        arguments +=
            workload.http2
            ? ["-c", "1", "-m", String(workload.concurrency)] : ["--h1", "-c", String(workload.concurrency)]
        let log = directory.appendingPathComponent("h2load-\(UUID().uuidString).log").path
        let child = try ChildProcess(
            executable: driver,
            arguments: ["spawn", h2load] + arguments + [url],
            environment: environment,
            logPath: log
        )
        let (status, usage) = child.waitWithUsage()
        let output = readText(log)
        guard status == 0, let wall = Self.h2loadSeconds(output),
            output.contains("\(workload.count) succeeded")
        else { throw BenchmarkError("h2load failed (\(status)): \(output)") }
        return Sample(wall: wall, cpu: usage.ru_utime.seconds + usage.ru_stime.seconds, peakRSS: Self.peakRSS(output))
    }

    /// The duration in h2load's "finished in 206.33ms, …" (or "1.52s").
    static func h2loadSeconds(_ output: String) -> Double? {
        guard let line = output.split(separator: "\n").first(where: { $0.hasPrefix("finished in ") }) else {
            return nil
        }
        let value = line.dropFirst("finished in ".count).prefix { $0 != "," }
        for (unit, scale) in [("ms", 1e-3), ("us", 1e-6), ("s", 1.0)] where value.hasSuffix(unit) {
            return Double(value.dropLast(unit.count)).map { $0 * scale }
        }
        return nil
    }
}
