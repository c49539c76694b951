import Glibc

/// A file descriptor open for writing, owned: written in full, synced and closed once (on
/// deinit at the latest), every failure with its errno.
final class WritableFile: @unchecked Sendable {
    // @unchecked: used by one task at a time (a download's sink runs in order); `descriptor` is
    // only changed by `close()`.
    private var descriptor: Int32
    private let path: String

    init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    deinit { close() }

    /// Writes every byte of `bytes`, through short writes and interruptions.
    func write(_ bytes: [UInt8]) throws {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                Glibc.write(descriptor, buffer.baseAddress.map { $0 + written }, bytes.count - written)
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw SesameError(.fileUnreadable, "cannot write '\(path)': \(errnoText())")
            }
            written += count
        }
    }

    /// Flushes what was written to the disk.
    func synchronize() throws {
        guard fsync(descriptor) == 0 else {
            throw SesameError(.fileUnreadable, "cannot write '\(path)' to disk: \(errnoText())")
        }
    }

    /// Closes the descriptor; later calls do nothing.
    func close() {
        guard descriptor >= 0 else { return }
        _ = Glibc.close(descriptor)
        descriptor = -1
    }
}
