import FoundationEssentials
import Glibc

/// A parsed `.netrc` file (the format of ftp(1) and curl): `machine`, `default`, `login`,
/// `password`, `account` and `macdef` (skipped), tokens separated by white space, optionally in
/// double quotes with backslash escapes.
public struct Netrc: Sendable {
    /// One `machine` (or `default`) entry.
    public struct Entry: Sendable, Equatable {
        /// The host name; nil for the `default` entry.
        public let machine: String?
        /// The `login` token of the entry, if any.
        public let login: String?
        /// The `password` token of the entry, if any.
        public let password: String?
    }

    /// The entries in the file's order; the `default` entry, if any, is last in effect: it is only
    /// used when no `machine` matches.
    public let entries: [Entry]

    /// `$NETRC`, else `~/.netrc`.
    public static var defaultURL: URL {
        let environment = ProcessInfo.processInfo.environment
        if let path = environment["NETRC"], !path.isEmpty { return URL(fileURLWithPath: path) }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? UserHome.path
        return URL(fileURLWithPath: home).appendingPathComponent(".netrc")
    }

    /// Reads and parses `url`; nil when the file does not exist.
    /// - Throws: ``SesameError/Code/netrcInvalid`` naming the file and line.
    public static func load(_ url: URL) throws -> Netrc? {
        let bytes: [UInt8]?
        do {
            bytes = try UserFile.readIfPresent(url.path, as: .netrc)
        } catch {
            throw SesameError(.netrcInvalid, error.detail)
        }
        guard let bytes else { return nil }
        return try Netrc(parsing: String(decoding: bytes, as: UTF8.self), source: url.path)
    }

    /// Parses netrc text; `source` names it in errors.
    public init(parsing text: String, source: String = "netrc") throws {
        var tokens = Tokenizer(text: text)
        var entries: [Entry] = []
        var machine: String??
        var login: String?
        var password: String?
        func finish() {
            if let machine { entries.append(Entry(machine: machine, login: login, password: password)) }
            login = nil
            password = nil
        }
        while let (token, line) = try tokens.next(source: source) {
            switch token {
            case "machine":
                finish()
                guard let (name, _) = try tokens.next(source: source) else {
                    throw SesameError(.netrcInvalid, "\(source):\(line): 'machine' without a host name")
                }
                machine = .some(name)
            case "default":
                finish()
                machine = .some(nil)
            case "login", "password", "account":
                guard let (value, _) = try tokens.next(source: source) else {
                    throw SesameError(.netrcInvalid, "\(source):\(line): '\(token)' without a value")
                }
                guard machine != nil else {
                    throw SesameError(.netrcInvalid, "\(source):\(line): '\(token)' before any 'machine'")
                }
                if token == "login" { login = value } else if token == "password" { password = value }
            case "macdef":
                finish()
                machine = nil
                _ = try tokens.next(source: source)
                tokens.skipMacro()
            default:
                throw SesameError(.netrcInvalid, "\(source):\(line): unexpected '\(token)'")
            }
        }
        finish()
        self.entries = entries
    }

    /// The entry for `host` (case-insensitive), else the `default` entry.
    public func entry(for host: String) -> Entry? {
        let host = host.lowercased()
        return entries.first { $0.machine?.lowercased() == host } ?? entries.first { $0.machine == nil }
    }

    private struct Tokenizer {
        let scalars: [Unicode.Scalar]
        var index = 0
        var line = 1

        init(text: String) { scalars = Array(text.unicodeScalars) }

        mutating func next(source: String) throws -> (String, Int)? {
            while index < scalars.count, scalars[index].properties.isWhitespace {
                if scalars[index] == "\n" { line += 1 }
                index += 1
            }
            guard index < scalars.count else { return nil }
            let startLine = line
            var token = ""
            if scalars[index] == "\"" {
                index += 1
                while true {
                    guard index < scalars.count else {
                        throw SesameError(.netrcInvalid, "\(source):\(startLine): unterminated quoted token")
                    }
                    let scalar = scalars[index]
                    index += 1
                    if scalar == "\"" { break }
                    if scalar == "\\", index < scalars.count {
                        let escaped = scalars[index]
                        index += 1
                        switch escaped {
                        case "n": token += "\n"
                        case "r": token += "\r"
                        case "t": token += "\t"
                        default: token.unicodeScalars.append(escaped)
                        }
                    } else {
                        if scalar == "\n" { line += 1 }
                        token.unicodeScalars.append(scalar)
                    }
                }
            } else {
                while index < scalars.count, !scalars[index].properties.isWhitespace {
                    token.unicodeScalars.append(scalars[index])
                    index += 1
                }
            }
            return (token, startLine)
        }

        /// A macro runs to the first empty line.
        mutating func skipMacro() {
            var previousWasNewline = false
            while index < scalars.count {
                let scalar = scalars[index]
                index += 1
                if scalar == "\n" {
                    line += 1
                    if previousWasNewline { return }
                    previousWasNewline = true
                } else {
                    previousWasNewline = false
                }
            }
        }
    }
}
