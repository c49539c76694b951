import FoundationEssentials
import Glibc
import Sesame

/// `--oauth2-bearer TOKEN` (curl's) and `--oauth2-refresh COMMAND`: a Bearer token for the URL's
/// origin only, and a command that prints a new one when the server refuses it.
struct FetchBearer: TokenAuthenticator {
    let token: String?
    let refreshCommand: String?

    /// The session's Bearer setting for `url`, or nil when neither option was given.
    static func authentication(_ options: FetchOptions, for url: URL) throws -> BearerAuthentication? {
        guard options.bearerToken != nil || options.bearerRefreshCommand != nil else { return nil }
        guard let scheme = url.scheme?.lowercased(), let host = url.host else { return nil }
        let port = url.port.map { ":\($0)" } ?? ""
        let bracketed = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return try BearerAuthentication(
            origins: ["\(scheme)://\(bracketed)\(port)"],
            authenticator: FetchBearer(token: options.bearerToken, refreshCommand: options.bearerRefreshCommand)
        )
    }

    func currentToken() async throws -> String? { token }

    /// Without a refresh command a refusal is the answer, as with curl: the 401 is delivered.
    func isTokenFailure(_ response: HTTPResponse) -> Bool {
        refreshCommand != nil && BearerAuthentication.isTokenFailure(response)
    }

    func refreshToken(rejecting rejected: String?) async throws -> String {
        guard let refreshCommand else { throw RefreshFailure("no --oauth2-refresh command gives a token") }
        return try await Self.run(refreshCommand, rejecting: rejected)
    }

    struct RefreshFailure: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }

    /// The most a refresh command may print, and the longest it may run.
    static let outputLimit = 64 * 1024
    static let timeLimit = 60.0

    /// Runs `command` with `/bin/sh -c`, the refused token in `SESAME_REJECTED_TOKEN`, and returns
    /// the first line it prints. The wait happens on a thread of its own, never on Swift's pool.
    static func run(_ command: String, rejecting rejected: String?) async throws -> String {
        var environment = ProcessInfo.processInfo.environment
        environment["SESAME_REJECTED_TOKEN"] = rejected ?? ""
        let child = try SpawnedCommand(["/bin/sh", "-c", command], environment: environment)
        let result = try await withCheckedThrowingContinuation { continuation in
            let started = DetachedThread.start {
                continuation.resume(returning: child.collect(limit: outputLimit, within: timeLimit))
            }
            if !started {
                continuation.resume(throwing: RefreshFailure("no thread to wait for the --oauth2-refresh command"))
            }
        }
        guard result.output.count <= outputLimit else {
            throw RefreshFailure("the --oauth2-refresh command printed more than \(outputLimit / 1024) KiB")
        }
        switch result.status {
        case nil:
            throw RefreshFailure("the --oauth2-refresh command did not finish within \(Int(timeLimit)) s")
        case 0?:
            break
        case let status?:
            throw RefreshFailure("the --oauth2-refresh command exited with status \(status)")
        }
        guard let line = String(decoding: result.output, as: UTF8.self).split(separator: "\n").first else {
            throw RefreshFailure("the --oauth2-refresh command printed no token")
        }
        return line.trimmingWhitespace()
    }
}

/// A command started with `posix_spawn`, its standard output a pipe to this process.
final class SpawnedCommand: Sendable {
    let pid: pid_t
    let output: Int32

    init(_ arguments: [String], environment: [String: String]) throws {
        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else {
            throw FetchBearer.RefreshFailure("pipe: \(String(cString: strerror(errno)))")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeEnds[1], 1)
        posix_spawn_file_actions_addclose(&actions, pipeEnds[0])
        posix_spawn_file_actions_addclose(&actions, pipeEnds[1])
        let argv = arguments.map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for pointer in argv + envp { free(pointer) } }
        var pid = pid_t()
        let spawned = posix_spawn(&pid, arguments[0], &actions, nil, argv, envp)
        close(pipeEnds[1])
        guard spawned == 0 else {
            close(pipeEnds[0])
            throw FetchBearer.RefreshFailure("cannot run \(arguments[0]): \(String(cString: strerror(spawned)))")
        }
        self.pid = pid
        output = pipeEnds[0]
    }

    /// Reads the output (at most `limit` bytes and one more) until the command exits, then the
    /// exit status; nil status when it ran past `seconds` (it is killed). A process the command
    /// left running with the pipe open does not hold the wait up.
    func collect(limit: Int, within seconds: Double) -> (status: Int32?, output: [UInt8]) {
        defer { close(output) }
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        var data: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        var status: Int32 = 0
        var exited = false
        while ContinuousClock.now < deadline {
            if !exited { exited = waitpid(pid, &status, WNOHANG) == pid }
            var ready = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
            let events = poll(&ready, 1, 50)
            if events == 0, exited { break }
            if events <= 0 { continue }
            let count = read(output, &buffer, buffer.count)
            if count <= 0 {
                if exited { break }
                // End of output before the exit: wait for the exit alone.
                while ContinuousClock.now < deadline, !exited {
                    exited = waitpid(pid, &status, WNOHANG) == pid
                    if !exited { usleep(10_000) }
                }
                break
            }
            data += buffer[0..<count]
            if data.count > limit { break }
        }
        guard exited || waitpid(pid, &status, WNOHANG) == pid else {
            kill(pid, SIGKILL)
            waitpid(pid, &status, 0)
            return (nil, data)
        }
        // The shell's status: its exit code, or 128 + the signal that ended it.
        let code = status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F)
        return (code, data)
    }
}
