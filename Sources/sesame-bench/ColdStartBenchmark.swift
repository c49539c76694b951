import Foundation
import SesameTesting

/// One GET from a process started for it: the `sesame` command against the curl CLI, the same
/// URL and the same trust file, what a script pays each time it runs one of them. Each run is a
/// pair (the two commands back to back, taking turns going first); wall time is measured here
/// around the driver's `spawn`, processor time and peak memory come from `wait4` (process
/// start-up, dynamic linking and exit included).
struct ColdStartBenchmark {
    struct Target {
        let name: String
        let url: String
        /// `--cacert` for https URLs.
        let trustFile: String?
    }

    struct Run {
        let wall: Double
        let cpu: Double
        let peakRSS: Int
    }

    let driver: String
    let sesame: String
    let runs: Int
    let environment: [String: String]
    let directory: URL

    /// The Markdown rows for `targets`: one per client, with the pairs' Sesame/curl ratios.
    func measure(_ targets: [Target]) throws -> [String] {
        var lines = [
            "| cold GET | client | wall ms median (min–max) | CPU ms median (min–max) | peak RSS MiB median (max) | Sesame/curl wall, CPU, peak RSS: median (min–max) of the pairs |",
            "|---|---|---|---|---|---|",
        ]
        for target in targets {
            var sesameRuns: [Run] = []
            var curlRuns: [Run] = []
            for index in 0..<runs {
                let sesameFirst = index % 2 == 0
                for client in sesameFirst ? [true, false] : [false, true] {
                    let run = try once(target, sesame: client)
                    if client { sesameRuns.append(run) } else { curlRuns.append(run) }
                }
                FileHandle.standardError.write(Data("  cold GET \(target.name) #\(index + 1)\r".utf8))
            }
            FileHandle.standardError.write(Data("\n".utf8))
            let pairs = zip(sesameRuns, curlRuns)
            let ratios = [
                pairs.map { $0.wall / max($1.wall, 1e-9) },
                pairs.map { $0.cpu / max($1.cpu, 1e-9) },
                pairs.map { Double($0.peakRSS) / Double(max($1.peakRSS, 1)) },
            ]
            let ratioText = ratios.map { Self.summary($0, format: "%.2f") }.joined(separator: "; ")
            for (client, samples) in [("sesame", sesameRuns), ("curl CLI", curlRuns)] {
                let rss = samples.map { Double($0.peakRSS) / 1024 }
                lines.append(
                    "| \(target.name) | \(client) | \(Self.summary(samples.map { $0.wall * 1000 }, format: "%.1f")) | "
                        + "\(Self.summary(samples.map { $0.cpu * 1000 }, format: "%.1f")) | "
                        + String(format: "%.1f (%.1f)", Self.median(rss), rss.max() ?? 0)
                        + " | \(client == "sesame" ? ratioText : "") |"
                )
            }
        }
        return lines
    }

    private func once(_ target: Target, sesame: Bool) throws -> Run {
        var arguments: [String]
        if sesame {
            arguments = [self.sesame, "--silent", "--show-error", "--fail", "-o", "/dev/null"]
        } else {
            arguments = [
                "/usr/bin/curl", "--silent", "--show-error", "--fail", "-o", "/dev/null", "--capath", "/nonexistent",
            ]
        }
        if let trustFile = target.trustFile { arguments += ["--cacert", trustFile] }
        arguments.append(target.url)
        let log = directory.appendingPathComponent("cold-\(UUID().uuidString).log").path
        let start = ContinuousClock.now
        let child = try ChildProcess(
            executable: driver,
            arguments: ["spawn"] + arguments,
            environment: environment,
            logPath: log
        )
        let (status, usage) = child.waitWithUsage()
        let wall = (ContinuousClock.now - start).seconds
        let output = readText(log)
        try? FileManager.default.removeItem(atPath: log)
        guard status == 0 else {
            throw BenchmarkError("\(arguments.joined(separator: " ")) failed (\(status)): \(output)")
        }
        // Processor time of the driver and the client together; the driver only forks and waits.
        return Run(
            wall: wall,
            cpu: usage.ru_utime.seconds + usage.ru_stime.seconds,
            peakRSS: Harness.peakRSS(output)
        )
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
    }

    static func summary(_ values: [Double], format: String) -> String {
        String(format: "\(format) (\(format)–\(format))", median(values), values.min() ?? 0, values.max() ?? 0)
    }
}
