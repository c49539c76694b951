/// The process exit codes of `sesame`.
enum ExitCode: Int32 {
    case ok = 0
    case failure = 1
    case usage = 2
}
