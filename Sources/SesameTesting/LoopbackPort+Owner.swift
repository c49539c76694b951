import FoundationEssentials
import Glibc

// Which process listens on a loopback port, from /proc.
//
// A peer is started on a port `LoopbackPort.unused()` found free a moment before; in between,
// another test's server can be given that port (a kernel-chosen ephemeral port). The peer then
// fails to bind, while a connect to the port succeeds, and the test talks to the wrong server
// (seen as an nginx or httpbin "resetting" a connection it never had). Checking that the listening
// socket is the peer's own tells the two apart.
extension LoopbackPort {
    /// Whether process `owner` holds a socket listening on TCP port `port` (IPv4).
    public static func isListening(on port: Int, by owner: pid_t) -> Bool {
        let listening = listeningInodes(port: port)
        guard !listening.isEmpty else { return false }
        return !listening.isDisjoint(with: socketInodes(of: owner))
    }

    /// The inodes of IPv4 sockets listening on `port` (/proc/net/tcp: local address, state 0A).
    ///
    /// The table has a line for every TCP socket of the machine (a parallel test run holds
    /// hundreds), so lines are matched as bytes and only a listening socket's line is split.
    private static func listeningInodes(port: Int) -> Set<UInt64> {
        // Read to the end: /proc files report a size of 0.
        guard let data = readToEnd("/proc/net/tcp") else { return [] }
        // "local_address rem_address st": a listening socket has no remote end.
        let hexPort = String(port, radix: 16, uppercase: true)
        let needle = Array(
            ":\(String(repeating: "0", count: max(0, 4 - hexPort.count)))\(hexPort) 00000000:0000 0A ".utf8
        )
        var inodes: Set<UInt64> = []
        for line in data.split(separator: UInt8(ascii: "\n")).dropFirst() where contains(Array(line), needle) {
            let columns = String(decoding: line, as: UTF8.self).split(separator: " ")
            guard columns.count > 9, let inode = UInt64(columns[9]) else { continue }
            inodes.insert(inode)
        }
        return inodes
    }

    private static func contains(_ bytes: [UInt8], _ needle: [UInt8]) -> Bool {
        guard let first = needle.first, bytes.count >= needle.count else { return false }
        var index = 0
        while index <= bytes.count - needle.count {
            if bytes[index] == first, bytes[index..<index + needle.count].elementsEqual(needle) { return true }
            index += 1
        }
        return false
    }

    /// The inodes of the sockets among `pid`'s open descriptors (links "socket:[INODE]").
    private static func socketInodes(of pid: pid_t) -> Set<UInt64> {
        let directory = "/proc/\(pid)/fd"
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        var inodes: Set<UInt64> = []
        for entry in entries {
            guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "\(directory)/\(entry)"),
                target.hasPrefix("socket:["), target.hasSuffix("]"),
                let inode = UInt64(target.dropFirst(8).dropLast())
            else { continue }
            inodes.insert(inode)
        }
        return inodes
    }

    /// The whole file, read until end of file; nil when it cannot be opened or read.
    private static func readToEnd(_ path: String) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 64 * 1024)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                return nil
            }
            bytes += chunk[..<count]
        }
    }
}
