import Foundation
import SesameTesting

@testable import Sesame

/// The outcome of one `sesame` run.
struct CLIRun {
    let status: Int32
    let stdout: String
    let stderr: String
}

/// Runs the built `sesame` next to this test bundle, as a user would. HOME and XDG_DATA_HOME
/// point into a fresh scratch folder, so no run touches the real home directory. The wait for the
/// child happens on a thread of its own: a blocking `waitpid` on the Swift concurrency pool (two
/// threads on a two-core machine) would stall every other test meanwhile. A child still running
/// after `killAfter` (a hang) is killed: its status is then 137.
func runSesame(
    _ arguments: [String],
    environment extra: [String: String] = [:],
    killAfter: Duration = .seconds(120)
) async throws -> CLIRun {
    let directory = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    let executable = directory.appendingPathComponent("sesame").path
    guard FileManager.default.isExecutableFile(atPath: executable) else {
        throw SesameError(.fileUnreadable, "the sesame executable is not built at \(executable)")
    }
    let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("sesame-cli-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let out = scratch.appendingPathComponent("out").path
    let err = scratch.appendingPathComponent("err").path
    // Under AddressSanitizer the child is instrumented too. Its exit-time leak check would
    // report the configuration still alive at exit(); the library's own leak checking runs in
    // the test process, so the CLI child runs without it.
    var environment = [
        "PATH": "/usr/bin:/bin",
        "ASAN_OPTIONS": "detect_leaks=0",
        "HOME": scratch.path,
        "XDG_DATA_HOME": scratch.appendingPathComponent("data").path,
    ]
    environment.merge(extra) { _, new in new }
    let child = try ChildProcess(
        executable: executable,
        arguments: arguments,
        environment: environment,
        logPath: out,
        errorPath: err
    )
    let finished = LockedValue(false)
    let seconds = Double(killAfter.components.seconds) + Double(killAfter.components.attoseconds) * 1e-18
    DispatchQueue.global().asyncAfter(deadline: .now() + seconds) {
        if !finished.withLock({ $0 }) { child.send(SIGKILL) }
    }
    let status = await withCheckedContinuation { continuation in
        Thread.detachNewThread {
            let status = child.wait()
            finished.withLock { $0 = true }
            continuation.resume(returning: status)
        }
    }
    return CLIRun(status: status, stdout: readText(out), stderr: readText(err))
}
