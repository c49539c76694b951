import Foundation

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
    private static func listeningInodes(port: Int) -> Set<UInt64> {
        // Read to the end: /proc files report a size of 0, and String(contentsOfFile:) then reads
        // only the first 4 KiB.
        guard let handle = FileHandle(forReadingAtPath: "/proc/net/tcp") else { return [] }
        defer { try? handle.close() }
        guard let data = try? handle.readToEnd() else { return [] }
        let table = String(decoding: data, as: UTF8.self)
        var inodes: Set<UInt64> = []
        for line in table.split(separator: "\n").dropFirst() {
            let columns = line.split(separator: " ", omittingEmptySubsequences: true)
            guard columns.count > 9, columns[3] == "0A",
                let colon = columns[1].lastIndex(of: ":"),
                Int(columns[1][columns[1].index(after: colon)...], radix: 16) == port,
                let inode = UInt64(columns[9])
            else { continue }
            inodes.insert(inode)
        }
        return inodes
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
}
