import Foundation

// The Markdown table the benchmark prints and writes.
extension Harness {
    /// One row per workload and client: rates, CPU per request, peak memory, round trips, and
    /// Sesame's rate over libcurl's within each repetition.
    func render(_ results: [String: [Client: [Sample]]], clientCPU: Int?) -> String {
        var lines = [
            "| workload | client | req/s median (min–max) | CPU µs/req | peak RSS MiB | round trips/req | server busy | Sesame/libcurl req/s median (min–max) | Sesame/libcurl peak RSS median (min–max) |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        func median(_ values: [Double]) -> Double {
            let sorted = values.sorted()
            return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
        }
        for workload in Self.workloads {
            guard let byClient = results[workload.name] else { continue }
            // Each repetition runs the clients back to back: the ratio within a repetition is
            // measured under the same load from the rest of the machine, so the ratios' median
            // is steadier than the ratio of the medians.
            let pairs = zip(byClient[.sesame, default: []], byClient[.libcurl, default: []])
            let ratios = pairs.map { sesame, libcurl in libcurl.wall / max(sesame.wall, 1e-9) }
            let memoryRatios = pairs.map { sesame, libcurl in Double(sesame.peakRSS) / Double(max(libcurl.peakRSS, 1)) }
            for client in Client.allCases {
                let samples = byClient[client, default: []]
                guard !samples.isEmpty else { continue }
                let rates = samples.map { Double(workload.count) / $0.wall }
                let cpu = median(samples.map { $0.cpu / Double(workload.count) * 1e6 })
                let rss = Double(samples.map(\.peakRSS).max() ?? 0) / 1024
                let busy = samples.compactMap { sample in sample.serverCPU.map { $0 / max(sample.wall, 1e-9) } }
                let serverBusy = busy.count == samples.count ? String(format: "%.0f %%", median(busy) * 100) : ""
                let ratio =
                    client == .sesame && !ratios.isEmpty
                    ? String(format: "%.2f (%.2f–%.2f)", median(ratios), ratios.min() ?? 0, ratios.max() ?? 0) : ""
                let memoryRatio =
                    client == .sesame && !memoryRatios.isEmpty
                    ? String(
                        format: "%.2f (%.2f–%.2f)",
                        median(memoryRatios),
                        memoryRatios.min() ?? 0,
                        memoryRatios.max() ?? 0
                    ) : ""
                lines.append(
                    "| \(workload.name) | \(client.rawValue) | "
                        + String(
                            format: median(rates) < 10 ? "%.2f (%.2f–%.2f)" : "%.0f (%.0f–%.0f)",
                            median(rates),
                            rates.min() ?? 0,
                            rates.max() ?? 0
                        )
                        + " | " + String(format: "%.0f", cpu) + " | " + String(format: "%.1f", rss) + " | "
                        + String(format: "%.3f", median(samples.map(\.roundTrips)))
                        + " | \(serverBusy) | \(ratio) | \(memoryRatio) |"
                )
            }
        }
        lines.append("")
        lines.append(
            "Sesame and libcurl time their own workload; curl CLI times include its process start-up. "
                + "h2load (concurrent rows): nghttp2's load generator with the same count and concurrency, "
                + "no certificate check and no body kept, on the clients' processor, which bounds it as it "
                + "bounds the clients. Server busy: processor time nginx's processes ran over the run's "
                + "wall time (median; schedstat): near 100 % the server bounds the rate, well under it the client. "
                + "\"System store\" is Debian's CA bundle plus the test root, loaded as each client does it. "
                + "Sesame/libcurl: Sesame's rate over libcurl's in the same repetition (run back to back, "
                + "taking turns going first), "
                + "median and range over the repetitions; the same for their peak memory (whole process, "
                + "from wait4). Both keep each body in memory. "
                + (clientCPU.map {
                    "Each client ran alone on processor \($0), the servers and proxy on the others."
                } ?? "Clients and servers shared every processor.")
        )
        return lines.joined(separator: "\n")
    }
}
