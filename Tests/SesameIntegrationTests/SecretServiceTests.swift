import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Permanent credentials in a real Secret Service: GNOME Keyring on a private session bus in a
/// scratch home (``SecretServicePeer``), used by the `sesame` executable as a user runs it. Each
/// test has a keyring of its own, removed after it. Serialized: every test starts two daemons.
@Suite(.serialized) struct SecretServiceTests {
    static let pki: TestPKI = {
        try! TestPKI()  // safe: nothing can be tested without it
    }()
    static let realm = "Sesame Keyring"

    func writeRoot() throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("root-\(UUID().uuidString).pem").path
        try Data(Self.pki.root.certificatePEM.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// An https origin asking for Basic in `realm`, answering with the user it accepted.
    func origin(users: [String: String]) throws -> LocalServer {
        let gate = BasicAuthGate(realm: Self.realm, users: users)
        var configuration = LocalServer.Configuration(identity: try Self.pki.leaf())
        configuration.handler = { request in gate.check(request) ?? .text("hello \(gate.user(request) ?? "?")") }
        return try LocalServer(configuration)
    }

    func sesame(_ arguments: [String], _ keyring: SecretServicePeer) async throws -> CLIRun {
        try await runSesame(arguments, environment: keyring.environment)
    }

    @Test func aPermanentCredentialSavedByOneProcessIsUsedByAnotherWithNoDelegate() async throws {
        let keyring = try await SecretServicePeer()
        defer { keyring.shutdown() }
        let server = try origin(users: ["ada": "s3cret, or not"])
        defer { server.shutdown() }
        let root = try writeRoot()
        let url = "https://localhost:\(server.port)/"

        let added = try await sesame(
            ["credentials", "add", url, "-u", "ada:s3cret, or not", "--realm", Self.realm, "--method", "basic"],
            keyring
        )
        #expect(added.status == 0, "\(added.stderr)")
        // In the keyring under Sesame's schema, labelled for a person, and not in the file.
        let lookup = try keyring.secretTool([
            "lookup", "xdg:schema", "org.sesame.Credential", "host", "localhost", "port", "\(server.port)", "user",
            "ada",
        ])
        #expect(lookup.output == "s3cret, or not")
        let search = try keyring.secretTool(["search", "--all", "xdg:schema", "org.sesame.Credential"])
        #expect(search.output.contains("label = Sesame: ada@localhost:\(server.port) (\(Self.realm))"))
        #expect(search.output.contains("attribute.authentication-method = NSURLAuthenticationMethodHTTPBasic"))
        #expect(search.output.contains("attribute.realm = \(Self.realm)"))
        let file = keyring.home.appendingPathComponent("data/sesame/credentials.json").path
        #expect(!FileManager.default.fileExists(atPath: file))

        // A second process: no -u, nothing in the code; the keyring answers the challenge.
        let fetched = try await sesame(["-v", "--cacert", root, url + "private"], keyring)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(fetched.stdout == "hello ada")
        #expect(fetched.stderr.contains("answered by credential storage"), "\(fetched.stderr)")

        let list = try await sesame(["credentials", "list"], keyring)
        #expect(list.stdout.contains("# Secret Service (session bus)"), "\(list.stdout)")
        #expect(list.stdout.contains("user ada"))
        #expect(!list.stdout.contains("s3cret"))  // never the password
    }

    @Test func aPasswordAnotherProgramStoredUnderTheNetworkSchemaIsFound() async throws {
        let keyring = try await SecretServicePeer()
        defer { keyring.shutdown() }
        let server = try origin(users: ["nina": "from-secret-tool"])
        defer { server.shutdown() }
        let root = try writeRoot()
        let stored = try keyring.secretTool(
            [
                "store", "--label=nina on localhost", "xdg:schema", "org.gnome.keyring.NetworkPassword", "server",
                "localhost", "protocol", "https", "port", "\(server.port)", "user", "nina",
            ],
            input: "from-secret-tool"
        )
        #expect(stored.status == 0, "\(stored.output)")
        // One for another port and one for plain http: neither answers this server.
        for (port, scheme) in [(server.port + 1, "https"), (server.port, "http")] {
            _ = try keyring.secretTool(
                [
                    "store", "--label=decoy", "xdg:schema", "org.gnome.keyring.NetworkPassword", "server", "localhost",
                    "protocol", scheme, "port", "\(port)", "user", "decoy",
                ],
                input: "wrong"
            )
        }
        let fetched = try await sesame(["--cacert", root, "https://localhost:\(server.port)/"], keyring)
        #expect(fetched.status == 0, "\(fetched.stderr)")
        #expect(fetched.stdout == "hello nina")
        #expect(server.requests.allSatisfy { !($0.headers["Authorization"] ?? "").contains("ZGVjb3k") })

        let list = try await sesame(["credentials", "list", "--credential-store", "secret-service"], keyring)
        #expect(list.stdout.contains("user nina\t(another program's, network-password schema)"), "\(list.stdout)")
        let removed = try await sesame(
            ["credentials", "remove", "https://localhost:\(server.port)/", "-u", "nina"],
            keyring
        )
        #expect(removed.status == 1)
        #expect(removed.stderr.contains("another program's"), "\(removed.stderr)")
        let still = try keyring.secretTool(["lookup", "server", "localhost", "user", "nina"])
        #expect(still.output == "from-secret-tool")
    }

    @Test func aLockedKeyringIsAClearErrorAndNothingFallsBackToTheFile() async throws {
        let keyring = try await SecretServicePeer()
        defer { keyring.shutdown() }
        let server = try origin(users: ["ada": "pw"])
        defer { server.shutdown() }
        let root = try writeRoot()
        let url = "https://localhost:\(server.port)/"
        let added = try await sesame(["credentials", "add", url, "-u", "ada:pw", "--realm", Self.realm], keyring)
        #expect(added.status == 0, "\(added.stderr)")
        try keyring.lock()

        let list = try await sesame(["credentials", "list", "--credential-store", "secret-service"], keyring)
        #expect(list.status == 1)
        #expect(list.stderr.contains("credential store locked"), "\(list.stderr)")
        let again = try await sesame(["credentials", "add", url, "-u", "bob:pw2", "--realm", Self.realm], keyring)
        #expect(again.status == 1)
        #expect(again.stderr.contains("credential store locked"), "\(again.stderr)")
        #expect(again.stderr.contains("nothing was"))
        let fetched = try await sesame(["--cacert", root, url], keyring)
        #expect(fetched.status != 0)
        #expect(fetched.stderr.contains("locked"), "\(fetched.stderr)")
        // The file was never written in the keyring's place.
        let file = keyring.home.appendingPathComponent("data/sesame/credentials.json").path
        #expect(!FileManager.default.fileExists(atPath: file))
    }

    @Test func aProviderThatStopsAnsweringTimesOutWithinTheBound() async throws {
        let keyring = try await SecretServicePeer()
        defer { keyring.shutdown() }
        let url = "https://localhost:1/"
        let added = try await sesame(["credentials", "add", url, "-u", "ada:pw"], keyring)
        #expect(added.status == 0, "\(added.stderr)")
        kill(keyring.providerPID, SIGSTOP)
        let started = ContinuousClock.now
        let stalled = try await sesame(["credentials", "add", url, "-u", "bob:pw"], keyring)
        let elapsed = ContinuousClock.now - started
        kill(keyring.providerPID, SIGCONT)
        #expect(stalled.status == 1)
        #expect(stalled.stderr.contains("did not answer within 5 s"), "\(stalled.stderr)")
        #expect(elapsed >= .seconds(5))
        #expect(elapsed < .seconds(40), "bounded by the 5 s timeout, with room for a loaded machine")
        let file = keyring.home.appendingPathComponent("data/sesame/credentials.json").path
        #expect(!FileManager.default.fileExists(atPath: file))
        let list = try await sesame(["credentials", "list", "--credential-store", "secret-service"], keyring)
        #expect(list.stdout.contains("user ada"))
        #expect(!list.stdout.contains("user bob"))
    }

    @Test func migrateMovesFileEntriesIntoTheKeyringAndBack() async throws {
        let keyring = try await SecretServicePeer()
        defer { keyring.shutdown() }
        let url = "https://api.example/"
        for (user, flag) in [("ada:one", "--default"), ("bob:two", nil)] {
            let added = try await sesame(
                ["credentials", "add", url, "-u", user, "--realm", "R", "--credential-store", "file"]
                    + [flag].compactMap { $0 },
                keyring
            )
            #expect(added.status == 0, "\(added.stderr)")
        }
        let moved = try await sesame(["credentials", "migrate"], keyring)
        #expect(moved.status == 0, "\(moved.stderr)")
        #expect(moved.stdout.contains("moved 2 credential(s)"), "\(moved.stdout)")
        #expect(
            try keyring.secretTool(["lookup", "xdg:schema", "org.sesame.Credential", "user", "ada"]).output == "one"
        )
        #expect(
            try keyring.secretTool(["lookup", "xdg:schema", "org.sesame.Credential", "user", "bob"]).output == "two"
        )
        let fileList = try await sesame(["credentials", "list", "--credential-store", "file"], keyring)
        #expect(fileList.stdout.contains("(no credentials stored)"), "\(fileList.stdout)")
        let keyringList = try await sesame(["credentials", "list", "--credential-store", "secret-service"], keyring)
        #expect(keyringList.stdout.contains("user ada\t(default)"), "\(keyringList.stdout)")

        let back = try await sesame(["credentials", "migrate", "--to", "file"], keyring)
        #expect(back.status == 0, "\(back.stderr)")
        let after = try await sesame(["credentials", "list", "--credential-store", "file"], keyring)
        #expect(after.stdout.contains("user ada\t(default)"))
        #expect(after.stdout.contains("user bob"))
        #expect(try keyring.secretTool(["search", "--all", "xdg:schema", "org.sesame.Credential"]).output.isEmpty)
    }

    @Test func writesByAnotherProcessAreAnnouncedAsChanges() async throws {
        let keyring = try await SecretServicePeer()
        defer { keyring.shutdown() }
        await #expect(processExitsWith: .success) { [environment = keyring.environment as [String: String]] in
            for (name, value) in environment { setenv(name, value, 1) }
            let storage: CredentialStorage
            do {
                storage = CredentialStorage(store: try SecretServiceCredentialStore())
            } catch {
                exit(3)
            }
            let changes = storage.changes
            let attributes = [
                "xdg:schema", "org.sesame.Credential", "host", "other.example", "port", "443", "protocol", "https",
                "authentication-method", "NSURLAuthenticationMethodHTTPBasic", "proxy", "false", "user", "zed",
                "default", "true",
            ]
            // Another process (secret-tool) stores, then clears, an item under Sesame's schema.
            let folder = NSTemporaryDirectory() + "/sesame-watch-\(getpid())"
            try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            _ = FileManager.default.createFile(atPath: folder + "/in", contents: Data("from-elsewhere".utf8))
            func tool(_ arguments: [String]) {
                let child = try? ChildProcess(
                    executable: "/usr/bin/secret-tool",
                    arguments: arguments,
                    environment: environment,
                    logPath: folder + "/log",
                    inputPath: folder + "/in"
                )
                guard child?.wait() == 0 else { exit(4) }
            }
            tool(["store", "--label=zed"] + attributes)
            let space = ProtectionSpace(
                host: "other.example",
                port: 443,
                protocol: "https",
                realm: nil,
                authenticationMethod: .httpBasic
            )
            var seen: [CredentialStorage.Change] = []
            // No change announced within a minute: the watch is not working, and SIGALRM ends
            // the process (which then does not exit with success).
            alarm(60)
            var iterator = changes.makeAsyncIterator()
            while !seen.contains(where: { $0.kind == .defaultChanged && $0.user == nil }) {
                guard let change = await iterator.next() else { break }
                seen.append(change)
                if change.kind == .added {
                    guard (try? storage.defaultCredential(for: space))??.password == "from-elsewhere" else { exit(5) }
                    tool(["clear"] + attributes)
                }
            }
            let expected: [CredentialStorage.Change.Kind] = [.added, .defaultChanged, .removed, .defaultChanged]
            guard seen.map(\.kind).filter({ expected.contains($0) }) == expected,
                seen.allSatisfy({ $0.protectionSpace == space })
            else { exit(6) }
        }
    }

    @Test func theDemosPermanentStepKeepsItsCredentialInTheKeyring() async throws {
        let keyring = try await SecretServicePeer()
        defer { keyring.shutdown() }
        let first = try await sesame(["demo", "--step", "permanent"], keyring)
        #expect(first.status == 0, "\(first.stdout)\n\(first.stderr)")
        #expect(first.stdout.contains("permanent credential store: Secret Service (session bus)"), "\(first.stdout)")
        let search = try keyring.secretTool(["search", "--all", "xdg:schema", "org.sesame.Credential", "user", "grace"])
        #expect(search.output.contains("label = Sesame: grace@localhost"), "\(search.output)")
        let again = try await sesame(["demo", "--step", "permanent"], keyring)
        #expect(again.status == 0, "\(again.stdout)")
        if !first.stdout.contains("is busy") {
            #expect(again.stdout.contains("from a previous run"), "\(again.stdout)")
        }
        let demoFile = keyring.home.appendingPathComponent("data/sesame/demo-credentials.json").path
        #expect(!FileManager.default.fileExists(atPath: demoFile))
    }

    @Test func withoutASessionBusTheSharedStorageUsesTheFile() async throws {
        let added = try await runSesame(["credentials", "add", "https://api.example/", "-u", "ada:pw"])
        #expect(added.status == 0, "\(added.stderr)")
        let list = try await runSesame(["credentials", "list"])
        #expect(list.stdout.contains("# Secret Service: not available"), "\(list.stdout)")
        let explicit = try await runSesame(["credentials", "list", "--credential-store", "secret-service"])
        #expect(explicit.status == 1)
        #expect(explicit.stderr.contains("credential store unavailable"), "\(explicit.stderr)")
    }
}
