import FoundationEssentials
import Glibc

/// Reads a password from the terminal without echoing it (`-u user` without a password).
enum PasswordPrompt {
    /// Prompts on /dev/tty when standard input is a terminal; throws otherwise (a script must not
    /// hang waiting for a password nobody will type).
    static func read(for user: String) throws -> String {
        guard isatty(0) == 1 else {
            throw Arguments.UsageError(
                description:
                    "no password given for '\(user)' and standard input is not a terminal; use -u \(user):PASSWORD"
            )
        }
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else { throw CommandError("cannot open the terminal to ask for a password") }
        defer { close(tty) }
        let prompt = Array("Enter password for user '\(user)': ".utf8)
        _ = prompt.withUnsafeBytes { write(tty, $0.baseAddress, $0.count) }
        var saved = termios()
        tcgetattr(tty, &saved)
        var silent = saved
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(tty, TCSAFLUSH, &silent)
        defer {
            tcsetattr(tty, TCSAFLUSH, &saved)
            _ = write(tty, "\n", 1)
        }
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while Glibc.read(tty, &byte, 1) == 1, byte != 0x0A { bytes.append(byte) }
        if bytes.last == 0x0D { bytes.removeLast() }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// `-u USER[:PASSWORD]`: split at the first colon, as curl does.
struct UserOption {
    let user: String
    let password: String?

    init(_ text: String, option: String = "-u") throws {
        guard !text.isEmpty else { throw Arguments.UsageError(description: "\(option) needs a user name") }
        // curl's `-u :`: no user and no password, the Kerberos ticket cache answers.
        if text == ":" {
            (user, password) = ("", "")
            return
        }
        if let colon = text.firstIndex(of: ":") {
            user = String(text[..<colon])
            password = String(text[text.index(after: colon)...])
        } else {
            user = text
            password = nil
        }
        guard !user.isEmpty else {
            throw Arguments.UsageError(description: "\(option) needs a user name before ':'")
        }
    }

    /// Whether this is `:` (curl's "use the Kerberos ticket cache").
    var isTicketCache: Bool { user.isEmpty }

    /// The password, asking on the terminal when it was not given.
    func resolvedPassword() throws -> String { try password ?? PasswordPrompt.read(for: user) }
}
