import Foundation

/// Writing to the terminal.
enum Output {
    /// A line on standard error, prefixed with "sesame: ".
    static func error(_ message: String) {
        FileHandle.standardError.write(Data("sesame: \(message)\n".utf8))
    }
}

/// `sesame --help`.
enum Usage {
    static let text = """
        usage: sesame <command> [options]

        commands:
          demo [--step NAME] [--list]   a tour of Sesame against servers started in this process on
                                        loopback with a fresh test PKI; exit 0 only when every step
                                        behaved as described
          --version                     the Sesame and OpenSSL versions
          --help                        this text

        exit codes: 0 ok, 1 a demo step misbehaved or another failure, 2 usage
        """
}
