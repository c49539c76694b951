import FoundationEssentials
import Sesame

/// `sesame credentials list | add | remove | default | migrate`: the permanent credential stores.
///
/// ```
/// sesame credentials add https://api.example/ -u ada --realm "API" [--method basic|digest|any] [--default]
/// sesame credentials list
/// sesame credentials default https://api.example/ -u ada --realm "API"
/// sesame credentials remove https://api.example/ -u ada --realm "API"
/// sesame credentials migrate [--to secret-service|file] [--credential-store FILE]
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
        var migrateTo = "secret-service"
    }

    private static let arguments = Arguments(
        valued: ["-u", "--user", "--realm", "--method", "--credential-store", "--to"],
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
        do {
            if options.action == "list" {
                try list(options.store)
                return .ok
            }
            if options.action == "migrate" {
                try CredentialMigration.run(to: options.migrateTo, file: options.store)
                return .ok
            }
            let storage = try CredentialStoreOption.storage(options.store)
            switch options.action {
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
                let entries = try storage.store?.entries(for: [space]).filter { $0.user == user.user } ?? []
                guard !entries.isEmpty else { throw CommandError("no credential for '\(user.user)' in \(space)") }
                guard entries.contains(where: { $0.origin == .sesame }) else {
                    throw CommandError(
                        "the password for '\(user.user)' in \(space) is another program's (network-password schema); Sesame leaves it: remove it with Seahorse or `secret-tool clear`"
                    )
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
                throw Arguments.UsageError(
                    description: "sesame credentials needs list, add, remove, default or migrate"
                )
            }
            return .ok
        } catch {
            // Nothing goes over the network here: a store or input problem (1) or a usage error (2).
            Output.error("\(error)")
            return ExitCode(error, settingUp: true)
        }
    }

    /// Every store when none is named (the keyring, or why there is none, then the file), else
    /// the one named. Passwords are never printed.
    private static func list(_ store: String?) throws {
        if let store {
            try list(try CredentialStoreOption.storage(store))
            return
        }
        do {
            try list(CredentialStorage(store: try CredentialStoreOption.secretService()))
        } catch let error as SesameError where error.code == .credentialStoreUnavailable {
            print("# Secret Service: not available (\(error.description))")
        }
        try list(CredentialStorage(store: FileCredentialStore.standard))
    }

    private static func list(_ storage: CredentialStorage) throws {
        guard let store = try storage.store else { return }
        print("# \(store.location)")
        let entries = try store.entries(for: nil)
        guard !entries.isEmpty else {
            print("(no credentials stored)")
            return
        }
        let rows = entries.sorted {
            ($0.protectionSpace.description, $0.user) < ($1.protectionSpace.description, $1.user)
        }
        for entry in rows {
            let notes = [
                entry.isDefault ? "(default)" : nil,
                entry.origin == .networkPassword ? "(another program's, network-password schema)" : nil,
            ].compactMap { $0 }
            print(([entry.protectionSpace.description, "user \(entry.user)"] + notes).joined(separator: "\t"))
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
            case .option("--to", let value?):
                guard value == "secret-service" || value == "file" else {
                    throw Arguments.UsageError(description: "--to is secret-service or file, not '\(value)'")
                }
                options.migrateTo = value
            case .option("--default", nil):
                options.makeDefault = true
            case .option(let name, _):
                throw Arguments.UsageError(description: "unknown option \(name)")
            }
        }
        return options
    }
}
