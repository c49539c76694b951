import FoundationEssentials
import Glibc

extension ChildProcess {
    /// Processor time the child and its descendants alive now have run, in seconds, to the
    /// nanosecond (the first field of each thread's `/proc/PID/task/TID/schedstat`). Descendants
    /// that have exited no longer count, so take differences over a span in which the process
    /// tree stays the same (nginx's workers live as long as nginx). Nil when /proc does not tell
    /// (no schedstat, or no `children` lists in this kernel).
    public var treeProcessorSeconds: Double? {
        var total: UInt64 = 0
        var pending = [pid]
        var seen = Set<pid_t>()
        while let process = pending.popLast(), seen.count < 4096 {
            guard seen.insert(process).inserted else { continue }
            let tasks = "/proc/\(process)/task"
            guard let threads = try? FileManager.default.contentsOfDirectory(atPath: tasks) else {
                if process == pid { return nil }
                continue  // exited meanwhile
            }
            for thread in threads {
                if let schedstat = try? String(contentsOfFile: "\(tasks)/\(thread)/schedstat", encoding: .utf8),
                    let first = schedstat.split(separator: " ").first, let nanoseconds = UInt64(first)
                {
                    total += nanoseconds
                } else if process == pid && thread == String(pid) {
                    return nil
                }
                guard let children = try? String(contentsOfFile: "\(tasks)/\(thread)/children", encoding: .utf8)
                else {
                    if process == pid && thread == String(pid) { return nil }
                    continue
                }
                pending += children.split(separator: " ").compactMap {
                    pid_t($0.trimming(where: \.properties.isWhitespace))
                }
            }
        }
        return Double(total) / 1e9
    }
}
