import Foundation
import Sesame

// The `sesame` command line. This first version reports versions; fetching, trust inspection and
// the demo arrive with the session layer.
let arguments = CommandLine.arguments.dropFirst()
switch arguments.first {
case "--version", "version":
    print("sesame \(Sesame.version) (\(Sesame.openSSLVersion))")
case nil, "--help", "-h", "help":
    print(
        """
        usage: sesame --version      print the Sesame and OpenSSL versions
               sesame --help         this text
        """
    )
default:
    FileHandle.standardError.write(Data("sesame: unknown command '\(arguments.first!)'; see sesame --help\n".utf8))
    exit(2)
}
