import Foundation
import Sesame

// The `sesame` command line: parse, call the library, print, map the outcome to an exit code.
let arguments = Array(CommandLine.arguments.dropFirst())
let status: ExitCode
switch arguments.first {
case "--version", "version":
    print("sesame \(Sesame.version) (\(Sesame.openSSLVersion))")
    status = .ok
case nil, "--help", "-h", "help":
    print(Usage.text)
    status = .ok
case "demo":
    status = await DemoCommand.run(arguments: Array(arguments.dropFirst()))
default:
    Output.error("unknown command '\(arguments[0])'; see sesame --help")
    status = .usage
}
exit(status.rawValue)
