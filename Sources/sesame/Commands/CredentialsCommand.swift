import Foundation
import Sesame

/// `sesame credentials list | add | remove | default`: the permanent credential store.
///
/// ```
/// sesame credentials add https://api.example/ -u ada --realm "API" [--method basic|digest|any] [--default]
/// sesame credentials list
/// sesame credentials default https://api.example/ -u ada --realm "API"
/// sesame credentials remove https://api.example/ -u ada --realm "API"
/// ```
enum CredentialsCommand {
    private struct Options {
        var action: String?
        var url: URL?
        var user: UserOption?
        var realm: String?
        var method = AuthenticationMethod.default
        var makeDefault = false
        var store: String?
    }

    private static let arguments = Arguments(
        valued: ["-u", "--user", "--realm", "--method", "--credential-store"],
        switches: ["--default"]
    )

    static func run(arguments: [String]) -> ExitCode {
        let options: Options
        do {
            options = try parse(arguments)
        } catch {
            Output.error("\(error)")
            return .usage
        }
        let storage = options.store.map { CredentialStorage(fileURL: URL(fileURLWithPath: $0)) } ?? .shared
        do {
            switch options.action {
            case "list":
                try list(storage)
            case "add":
                let (space, user) = try target(options)
                let password = try user.resolvedPassword()
                let credential = Credential(user: user.user, password: password, persistence: .permanent)
                if options.makeDefault {
                    try storage.setDefaultCredential(credential, for: space)
                } else {
                    try storage.set(credential, for: space)
                }
                print("added \(user.user) for \(space)")
            case "remove":
                let (space, user) = try target(options)
                guard try storage.credentials(for: space)[user.user] != nil else {
                    throw CommandError("no credential for '\(user.user)' in \(space)")
                }
                try storage.remove(Credential(user: user.user, password: "", persistence: .permanent), for: space)
                print("removed \(user.user) from \(space)")
            case "default":
                let (space, user) = try target(options)
                guard let existing = try storage.credentials(for: space)[user.user] else {
                    throw CommandError("no credential for '\(user.user)' in \(space); add it first")
                }
                try storage.setDefaultCredential(existing, for: space)
                print("\(user.user) is now the default for \(space)")
            default:
                throw Arguments.UsageError(description: "sesame credentials needs list, add, remove or default")
            }
            return .ok
        } catch {
            // Nothing goes over the network here: a store or input problem (1) or a usage error (2).
            Output.error("\(error)")
            return ExitCode(error, settingUp: true)
        }
    }

    private static func list(_ storage: CredentialStorage) throws {
        let all = try storage.allCredentials
        if let file = storage.fileURL { print("# \(file.path)") }
        guard !all.isEmpty else {
            print("(no credentials stored)")
            return
        }
        let rows = all.sorted { $0.key.description < $1.key.description }
        for (space, credentials) in rows {
            let defaultUser = try storage.defaultCredential(for: space)?.user
            for user in credentials.keys.sorted() {
                // Never the password.
                print("\(space)\tuser \(user)\(user == defaultUser ? "\t(default)" : "")")
            }
        }
    }

    private static func target(_ options: Options) throws -> (ProtectionSpace, UserOption) {
        guard let url = options.url,
            let space = ProtectionSpace(url: url, realm: options.realm, authenticationMethod: options.method)
        else { throw Arguments.UsageError(description: "give the server as a URL, such as https://api.example/") }
        guard let user = options.user else {
            throw Arguments.UsageError(description: "give the user with -u USER[:PASSWORD]")
        }
        return (space, user)
    }

    private static func parse(_ arguments: [String]) throws -> Options {
        var options = Options()
        for item in try Self.arguments.parse(arguments) {
            switch item {
            case .positional(let text) where options.action == nil:
                options.action = text
            case .positional(let text) where options.url == nil:
                guard let url = URL(string: text), let scheme = url.scheme?.lowercased(),
                    scheme == "http" || scheme == "https", url.host != nil
                else { throw Arguments.UsageError(description: "'\(text)' is not an http or https URL") }
                options.url = url
            case .positional(let text):
                throw Arguments.UsageError(description: "unexpected argument '\(text)'")
            case .option("-u", let value?), .option("--user", let value?):
                options.user = try UserOption(value)
            case .option("--realm", let value?):
                options.realm = value
            case .option("--method", let value?):
                switch value.lowercased() {
                case "basic": options.method = .httpBasic
                case "digest": options.method = .httpDigest
                case "any": options.method = .default
                default: throw Arguments.UsageError(description: "--method is basic, digest or any, not '\(value)'")
                }
            case .option("--credential-store", let value?):
                options.store = value
            case .option("--default", nil):
                options.makeDefault = true
            case .option(let name, _):
                throw Arguments.UsageError(description: "unknown option \(name)")
            }
        }
        return options
    }
}
