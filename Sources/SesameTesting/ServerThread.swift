import Glibc
import Sesame

/// The test servers' threads: each accept loop and each connection runs on a thread of its own,
/// never on Swift's cooperative pool, where a blocking read would hold one of its few threads.
enum ServerThread {
    /// Starts a detached thread running `body`. A test server that cannot start its thread
    /// cannot serve, so a refusal stops the process with the reason.
    static func start(_ body: @escaping @Sendable () -> Void) {
        guard DetachedThread.start(body) else {
            // safe: a test server without its thread cannot serve; the test would hang instead.
            fatalError("SesameTesting: a server thread could not be started: \(String(cString: strerror(errno)))")
        }
    }

    /// Blocks the calling server thread for `duration`.
    static func sleep(_ duration: Duration) {
        let parts = duration.components
        var request = timespec(tv_sec: Int(parts.seconds), tv_nsec: Int(parts.attoseconds / 1_000_000_000))
        var remaining = timespec()
        while nanosleep(&request, &remaining) != 0, errno == EINTR { request = remaining }
    }
}
