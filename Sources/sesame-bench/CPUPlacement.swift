import Foundation
import SesameTesting

/// Keeps the clients and the peers on separate processors.
///
/// Measured with everything sharing this machine's two processors, a client's rate partly
/// measured how much processor time it took from the server it was measured against: with 64
/// concurrent clients against nginx serving a static file, Sesame (a loop thread and Swift's
/// concurrency threads) ran at 0.97 of libcurl's rate (one thread) sharing both processors, and
/// at 1.24 with the client on one and nginx on the other. A real server is not on the client's
/// machine. So the peers (and this process) run on every processor but the last, and each
/// client on the last, alone, through the libcurl driver's `spawn` (`SESAME_BENCH_CPU`).
enum CPUPlacement {
    /// Moves every thread of this process (and so the peers it starts afterwards) off the last
    /// processor, and returns that processor for the clients. Nil, leaving everything as it is,
    /// with fewer than two processors.
    static func separateClients() throws -> Int? {
        let processors = try allowedProcessors()
        guard processors.count >= 2, let client = processors.last else { return nil }
        // Every thread, with util-linux's taskset: the threads made later inherit it from theirs.
        let peers = processors.dropLast().map(String.init).joined(separator: ",")
        let taskset = try ChildProcess(
            executable: "/usr/bin/taskset",
            arguments: ["--all-tasks", "--pid", "--cpu-list", peers, String(getpid())],
            environment: [:],
            logPath: "/dev/null"
        )
        let status = taskset.wait()
        guard status == 0 else {
            throw BenchmarkError("taskset could not move the benchmark to processors \(peers) (\(status))")
        }
        return client
    }

    /// The processors this process may run on ("Cpus_allowed_list" in /proc/self/status, such
    /// as "0-3,6").
    static func allowedProcessors() throws -> [Int] {
        let status = try String(contentsOfFile: "/proc/self/status", encoding: .utf8)
        guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix("Cpus_allowed_list:") }) else {
            throw BenchmarkError("/proc/self/status has no Cpus_allowed_list")
        }
        var processors: [Int] = []
        for range in line.dropFirst("Cpus_allowed_list:".count).split(separator: ",") {
            let bounds = range.split(separator: "-").compactMap { Int($0.trimmingCharacters(in: .whitespaces)) }
            guard let first = bounds.first, let last = bounds.last, bounds.count <= 2, first <= last else {
                throw BenchmarkError("cannot read the processor list '\(line)'")
            }
            processors += Array(first...last)
        }
        return processors
    }
}
