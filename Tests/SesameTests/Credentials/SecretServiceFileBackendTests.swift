import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// ``SecretServiceCredentialStore`` through libsecret's own file backend (`SECRET_BACKEND=file`):
/// the real library and the real attribute mapping, without a bus. Each test runs in a child
/// process, since libsecret reads its backend from the environment once per process.
@Suite struct SecretServiceFileBackendTests {
    static var available: Bool { FileManager.default.fileExists(atPath: "/usr/lib/x86_64-linux-gnu/libsecret-1.so.0") }

    @Test(.enabled(if: available, "libsecret-1-0 is installed by scripts/install-deps.sh"))
    func savedEntriesReadBackWithTheirDefaultsAndAreRemoved() async throws {
        let folder = try ScratchFolder.make("secret-file").path
        await #expect(processExitsWith: .success) { [folder = folder as String] in
            useFileBackend(folder)
            let store = orExit { try SecretServiceCredentialStore() }
            orExit { try store.probe() }
            let api = ProtectionSpace(
                host: "api.example",
                port: 443,
                protocol: "https",
                realm: "API",
                authenticationMethod: .httpBasic
            )
            let noRealm = ProtectionSpace(
                host: "api.example",
                port: 443,
                protocol: "https",
                realm: nil,
                authenticationMethod: .httpBasic
            )
            orExit {
                try store.save(StoredCredential(protectionSpace: api, user: "ada", password: "one", isDefault: true))
            }
            orExit { try store.save(StoredCredential(protectionSpace: api, user: "bob", password: "two")) }
            orExit { try store.save(StoredCredential(protectionSpace: noRealm, user: "carl", password: "three")) }
            var entries = orExit { try store.entries(for: [api]) }
            expectOrExit(Set(entries.map(\.user)) == ["ada", "bob"], "only the realm's entries: \(entries)")
            expectOrExit(entries.first { $0.user == "ada" }?.isDefault == true, "ada is the default")
            expectOrExit(entries.first { $0.user == "bob" }?.password == "two", "bob's password")
            // Saving again replaces; making bob the default takes it from ada; nothing is duplicated.
            orExit {
                try store.save(
                    StoredCredential(protectionSpace: api, user: "bob", password: "two again", isDefault: true)
                )
            }
            entries = orExit { try store.entries(for: [api]) }
            expectOrExit(entries.count == 2, "one item per user: \(entries)")
            expectOrExit(entries.first { $0.isDefault }?.user == "bob", "bob is the default now")
            expectOrExit(entries.first { $0.user == "bob" }?.password == "two again", "replaced")
            expectOrExit(orExit { try store.setDefault(user: "ada", for: api) }, "ada is stored")
            expectOrExit(orExit { try store.entries(for: [api]) }.first { $0.isDefault }?.user == "ada", "ada again")
            expectOrExit(!orExit { try store.setDefault(user: "zoe", for: api) }, "zoe is not stored")
            expectOrExit(orExit { try store.entries(for: nil) }.count == 3, "every entry")
            expectOrExit(orExit { try store.remove(user: "ada", from: api) }, "ada removed")
            expectOrExit(!orExit { try store.remove(user: "ada", from: api) }, "ada already gone")
            expectOrExit(orExit { try store.entries(for: [api]) }.map(\.user) == ["bob"], "bob is left")
            expectOrExit(
                orExit { try store.entries(for: [noRealm]) }.map(\.password) == ["three"],
                "the realm-less one"
            )
        }
    }

    @Test(.enabled(if: available, "libsecret-1-0 is installed by scripts/install-deps.sh"))
    func theStorageAnswersChallengesFromTheKeyringAndStillReadsTheOldFile() async throws {
        let folder = try ScratchFolder.make("secret-file").path
        await #expect(processExitsWith: .success) { [folder = folder as String] in
            useFileBackend(folder)
            let space = ProtectionSpace(
                host: "app.example",
                port: 443,
                protocol: "https",
                realm: "R",
                authenticationMethod: .httpBasic
            )
            let file = FileCredentialStore(fileURL: URL(fileURLWithPath: folder + "/credentials.json"))
            orExit { try file.save(StoredCredential(protectionSpace: space, user: "old", password: "from-file")) }
            let before = readText(folder + "/credentials.json")
            // The automatic choice: the keyring answers (here, libsecret's file backend).
            let storage = CredentialStorage.automatic(fileURL: URL(fileURLWithPath: folder + "/credentials.json"))
            let location = orExit { try storage.store?.location } ?? ""
            expectOrExit(location.hasPrefix("Secret Service (libsecret's file backend), also reading"), location)
            expectOrExit(
                orExit { try storage.defaultCredential(for: space) }?.password == "from-file",
                "the file's entry"
            )
            orExit {
                try storage.setDefaultCredential(
                    Credential(user: "new", password: "kept", persistence: .permanent),
                    for: space
                )
            }
            expectOrExit(orExit { try storage.defaultCredential(for: space) }?.user == "new", "the new default")
            expectOrExit(readText(folder + "/credentials.json") == before, "the file is not written")
            let keyring = orExit { try SecretServiceCredentialStore() }
            expectOrExit(orExit { try keyring.entries(for: [space]) }.map(\.user) == ["new"], "written to the keyring")
            expectOrExit(Set(orExit { try storage.credentials(for: space) }.keys) == ["old", "new"], "both found")
        }
    }

    @Test(.enabled(if: available, "libsecret-1-0 is installed by scripts/install-deps.sh"))
    func networkPasswordItemsOfOtherProgramsAnswerTheirServerOnly() async throws {
        let folder = try ScratchFolder.make("secret-file").path
        await #expect(processExitsWith: .success) { [folder = folder as String] in
            useFileBackend(folder)
            var environment = ProcessInfo.processInfo.environment
            environment["SECRET_BACKEND"] = "file"
            for (server, scheme, user) in [("wiki.example", "https", "nina"), ("wiki.example", "http", "plain")] {
                let input = folder + "/secret-\(user)"
                _ = FileManager.default.createFile(atPath: input, contents: Data("pw-\(user)".utf8))
                let tool = orExit {
                    try ChildProcess(
                        executable: "/usr/bin/secret-tool",
                        arguments: [
                            "store", "--label=\(user)", "xdg:schema", "org.gnome.keyring.NetworkPassword", "server",
                            server,
                            "protocol", scheme, "user", user,
                        ],
                        environment: environment,
                        logPath: folder + "/tool.log",
                        inputPath: input
                    )
                }
                expectOrExit(tool.wait() == 0, "secret-tool store: \(readText(folder + "/tool.log"))")
            }
            let store = orExit { try SecretServiceCredentialStore() }
            let space = ProtectionSpace(
                host: "wiki.example",
                port: 443,
                protocol: "https",
                realm: "Wiki",
                authenticationMethod: .httpBasic
            )
            let found = orExit { try store.entries(for: [space]) }
            expectOrExit(found.map(\.user) == ["nina"] && found.first?.origin == .networkPassword, "\(found)")
            expectOrExit(found.first?.password == "pw-nina", "nina's password")
            let storage = CredentialStorage(store: store)
            expectOrExit(orExit { try storage.defaultCredential(for: space) }?.user == "nina", "answers the challenge")
            do {
                try store.save(
                    StoredCredential(protectionSpace: space, user: "nina", password: "x", origin: .networkPassword)
                )
                expectOrExit(false, "another program's item is never rewritten")
            } catch {
                expectOrExit((error as? SesameError)?.code == .invalidArgument, "\(error)")
            }
        }
    }
}

/// Points libsecret at its file backend in `folder` (before its first use in this process).
func useFileBackend(_ folder: String) {
    setenv("SECRET_BACKEND", "file", 1)
    setenv("SECRET_FILE_TEST_PATH", folder + "/test.keyring", 1)
    setenv("SECRET_FILE_TEST_PASSWORD", "sesame-test", 1)
    unsetenv("DBUS_SESSION_BUS_ADDRESS")
}

func orExit<T>(_ body: () throws -> T, line: Int = #line) -> T {
    do {
        return try body()
    } catch {
        FileHandle.standardError.write(Data("line \(line): \(error)\n".utf8))
        exit(1)
    }
}

func expectOrExit(_ condition: Bool, _ message: String, line: Int = #line) {
    guard condition else {
        FileHandle.standardError.write(Data("line \(line): \(message)\n".utf8))
        exit(1)
    }
}
