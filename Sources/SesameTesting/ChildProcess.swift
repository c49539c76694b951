internal import CSesameShims
import Dispatch
import FoundationEssentials
import Glibc

/// A child process started with `posix_spawn`, its output appended to a log file: for test peers
/// (nginx, `openssl s_server`) and for running command-line tools from tests.
///
/// Foundation's `Process.waitUntilExit()` spins a run loop and has hung in test processes here;
/// this helper waits with `waitpid` instead.
public final class ChildProcess: Sendable {
    /// The child's process ID.
    public let pid: Glibc.pid_t

    /// Starts `executable` with exactly `arguments` and `environment`; standard output (and
    /// standard error, unless `errorPath` is given) go to `logPath`; standard input is read from
    /// `inputPath` (else `/dev/null`).
    public init(
        executable: String,
        arguments: [String],
        environment: [String: String],
        logPath: String,
        errorPath: String? = nil,
        inputPath: String? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, inputPath ?? "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&actions, 1, logPath, O_WRONLY | O_CREAT | O_APPEND, 0o644)
        if let errorPath {
            posix_spawn_file_actions_addopen(&actions, 2, errorPath, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        } else {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        }
        // Nothing else of this process goes along: a peer holding a copy of another test's
        // connection would keep it open after that test closed it.
        CSesameShims_spawn_close_from(&actions, 3)
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for argument in argv { free(argument) }
            for variable in envp { free(variable) }
        }
        // The test runner's threads block signals, and a child inherits the mask: reset it, or
        // SIGTERM never reaches the child.
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        var defaults = sigset_t()
        sigemptyset(&defaults)
        sigaddset(&defaults, SIGTERM)
        sigaddset(&defaults, SIGPIPE)
        posix_spawnattr_setsigmask(&attributes, &empty)
        posix_spawnattr_setsigdefault(&attributes, &defaults)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid = pid_t()
        let status = posix_spawn(&pid, executable, &actions, &attributes, argv, envp)
        guard status == 0 else {
            throw TestingError("posix_spawn \(executable): \(String(cString: strerror(status)))")
        }
        self.pid = pid
    }

    /// True while the child has not exited.
    public var isRunning: Bool {
        var status: Int32 = 0
        return waitpid(pid, &status, WNOHANG) == 0
    }

    /// Waits for the child to exit and returns its exit status (128 + signal when killed).
    public func wait() -> Int32 { waitWithUsage().status }

    /// Waits for the child to exit; returns its exit status and the resources it used.
    public func waitWithUsage() -> (status: Int32, usage: rusage) {
        var status: Int32 = 0
        var usage = rusage()
        _ = wait4(pid, &status, 0, &usage)
        let signal = status & 0x7F
        return (signal == 0 ? (status >> 8) & 0xFF : 128 + signal, usage)
    }

    /// Sends `signal` to the child, without waiting for it (whoever waits reaps it).
    public func send(_ signal: Int32) { kill(pid, signal) }

    /// Sends SIGTERM and reaps the child.
    public func stop() {
        kill(pid, SIGTERM)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
    }

    /// Sends SIGTERM and returns at once; a thread of its own reaps the child, then runs
    /// `afterExit`. For peers that take seconds to shut down: a test's `defer` would otherwise
    /// hold one of the few Swift concurrency threads meanwhile, starving the tests running
    /// beside it.
    /// The process waits for these children (at most 10 seconds) when it exits, so that they do
    /// not outlive it and `afterExit` still runs.
    public func stopInBackground(afterExit: @escaping @Sendable () -> Void = {}) {
        kill(pid, SIGTERM)
        let pid = pid
        BackgroundStops.shared.enter()
        ServerThread.start {
            var status: Int32 = 0
            _ = waitpid(pid, &status, 0)
            afterExit()
            BackgroundStops.shared.leave()
        }
    }
}

/// Children stopping in the background; the process waits for them when it exits.
private final class BackgroundStops: Sendable {
    static let shared = BackgroundStops()
    private let group = DispatchGroup()

    private init() {
        atexit { _ = BackgroundStops.shared.group.wait(timeout: .now() + 10) }
    }

    func enter() { group.enter() }
    func leave() { group.leave() }
}

/// The UTF-8 text of a file, or "" when it cannot be read (logs of peers and child processes).
///
/// Reads with `read(2)`: Foundation's file readers leak their buffer for empty files on this
/// toolchain (LeakSanitizer shows it), and these logs are often empty.
public func readText(_ path: String) -> String {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return "" }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        bytes += chunk[0..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}
