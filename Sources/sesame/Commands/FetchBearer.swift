import Foundation
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
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        var environment = ProcessInfo.processInfo.environment
        environment["SESAME_REJECTED_TOKEN"] = rejected ?? ""
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let result: (status: Int32, output: Data) = await withCheckedContinuation { continuation in
            Thread.detachNewThread {
                let deadline = Date().addingTimeInterval(timeLimit)
                let watchdog = Thread {
                    while process.isRunning, Date() < deadline { usleep(50_000) }
                    if process.isRunning { process.terminate() }
                }
                watchdog.start()
                var data = Data()
                let handle = output.fileHandleForReading
                while data.count <= outputLimit, let piece = try? handle.read(upToCount: 4096), !piece.isEmpty {
                    data.append(piece)
                }
                if data.count > outputLimit { process.terminate() }
                process.waitUntilExit()
                continuation.resume(returning: (process.terminationStatus, data))
            }
        }
        guard result.status == 0 else {
            throw RefreshFailure("the --oauth2-refresh command exited with status \(result.status)")
        }
        guard result.output.count <= outputLimit,
            let line = String(decoding: result.output, as: UTF8.self).split(separator: "\n").first
        else {
            throw RefreshFailure("the --oauth2-refresh command printed no token")
        }
        return line.trimmingCharacters(in: .whitespaces)
    }
}
