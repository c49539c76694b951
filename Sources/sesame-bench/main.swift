import Foundation
import Sesame
import SesameTesting

// sesame-bench: Sesame against libcurl's multi interface and the curl CLI, side by side in one
// run, against nginx on loopback. `swift run -c release sesame-bench [--repetitions N]`.
let arguments = Array(CommandLine.arguments.dropFirst())
do {
    var repetitions = 4
    var output: String? = nil
    var only: String? = nil
    var separatesClients = true
    var index = 0
    while index < arguments.count {
        switch arguments[index] {
        case "--repetitions":
            index += 1
            guard index < arguments.count, let value = Int(arguments[index]), value > 0 else {
                throw BenchmarkError("--repetitions needs a positive number")
            }
            repetitions = value
        case "--output":
            index += 1
            guard index < arguments.count else { throw BenchmarkError("--output needs a file") }
            output = arguments[index]
        case "--only":
            index += 1
            guard index < arguments.count else { throw BenchmarkError("--only needs part of a workload name") }
            only = arguments[index]
        case "--shared-processors":
            separatesClients = false
        case "--evaluations":
            try EvaluationBenchmark.run(repetitions: repetitions)
            exit(0)
        case "--credential-stores":
            try await CredentialStoreBenchmark.run(repetitions: repetitions)
            exit(0)
        case "--help", "-h":
            print(
                "usage: sesame-bench [--repetitions N] [--output FILE.md] [--only NAME-PART] [--shared-processors] | [--repetitions N] --evaluations | [--repetitions N] --credential-stores"
            )
            exit(0)
        default:
            throw BenchmarkError("unknown option \(arguments[index])")
        }
        index += 1
    }
    let table = try await Harness(repetitions: repetitions, only: only, separatesClients: separatesClients).run()
    print(table)
    if let output { try Data(table.utf8).write(to: URL(fileURLWithPath: output)) }
} catch {
    FileHandle.standardError.write(Data("sesame-bench: \(error)\n".utf8))
    exit(1)
}
