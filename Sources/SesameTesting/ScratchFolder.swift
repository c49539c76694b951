import FoundationEssentials
import Glibc

/// Scratch folders for test servers and tests.
///
/// Each is a new folder inside one folder per process, which is removed when the process exits
/// normally: whatever a server or test leaves behind (a `stop()` never called, a test that
/// threw) does not pile up in the temporary directory from one test run to the next.
public enum ScratchFolder {
    /// Makes a new, empty folder named `name` followed by a unique suffix.
    public static func make(_ name: String) throws -> URL {
        let url = processFolder.appendingPathComponent("\(name)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    /// The folder holding this process's scratch folders.
    public static let processFolder: URL = {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent(
            "sesame-scratch-\(getpid())-\(UUID().uuidString)"
        )
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        // Peers that drop privileges (nginx workers, squid, Apache) reach their folders through it.
        chmod(url.path, 0o755)
        atexit { try? FileManager.default.removeItem(at: ScratchFolder.processFolder) }
        return url
    }()
}
