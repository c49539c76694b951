import FoundationEssentials
import Glibc
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
case "trust":
    status = await TrustCommand.run(arguments: Array(arguments.dropFirst()))
case "credentials":
    status = CredentialsCommand.run(arguments: Array(arguments.dropFirst()))
case "fetch":
    status = await FetchCommand.run(arguments: Array(arguments.dropFirst()))
default:
    // Like curl: `sesame URL [options]` fetches.
    status = await FetchCommand.run(arguments: arguments)
}
exit(status.rawValue)
