import Foundation
import SesameTesting
import Testing

@testable import Sesame

let apiSpace = ProtectionSpace(
    host: "API.example",
    port: 443,
    protocol: "https",
    realm: "api",
    authenticationMethod: .httpBasic
)

@Suite struct CredentialStorageTests {
    @Test func protectionSpacesCompareAsValues() {
        let same = ProtectionSpace(
            host: "api.EXAMPLE",
            port: 443,
            protocol: "HTTPS",
            realm: "api",
            authenticationMethod: .httpBasic
        )
        #expect(same == apiSpace)
        #expect(Set([same, apiSpace]).count == 1)
        #expect(
            apiSpace
                != ProtectionSpace(
                    host: "api.example",
                    port: 443,
                    protocol: "https",
                    realm: "API",
                    authenticationMethod: .httpBasic
                )
        )
        #expect(
            apiSpace
                != ProtectionSpace(
                    host: "api.example",
                    port: 8443,
                    protocol: "https",
                    realm: "api",
                    authenticationMethod: .httpBasic
                )
        )
        #expect(
            apiSpace
                != ProtectionSpace(
                    proxyHost: "api.example",
                    port: 443,
                    type: "https",
                    realm: "api",
                    authenticationMethod: .httpBasic
                )
        )
        #expect(
            apiSpace
                != ProtectionSpace(
                    host: "api.example",
                    port: 443,
                    protocol: "https",
                    realm: "api",
                    authenticationMethod: .httpDigest
                )
        )
    }

    @Test func memoryStorageKeepsSessionCredentialsAndIgnoresNone() throws {
        let storage = CredentialStorage()
        try storage.set(Credential(user: "ada", password: "x", persistence: .none), for: apiSpace)
        #expect(try storage.credentials(for: apiSpace).isEmpty)
        try storage.set(Credential(user: "ada", password: "x", persistence: .forSession), for: apiSpace)
        try storage.set(Credential(user: "bob", password: "y", persistence: .forSession), for: apiSpace)
        #expect(try storage.credentials(for: apiSpace).keys.sorted() == ["ada", "bob"])
        #expect(try storage.defaultCredential(for: apiSpace) == nil)  // two, none chosen
        try storage.setDefaultCredential(
            Credential(user: "bob", password: "y", persistence: .forSession),
            for: apiSpace
        )
        #expect(try storage.defaultCredential(for: apiSpace)?.user == "bob")
        try storage.remove(Credential(user: "bob", password: "", persistence: .forSession), for: apiSpace)
        #expect(try storage.defaultCredential(for: apiSpace)?.user == "ada")  // the only one left
        #expect(try storage.allCredentials.count == 1)
    }

    @Test func permanentCredentialsSurviveInAPrivateFile() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("nested/credentials.json")
        let first = CredentialStorage(fileURL: file)
        try first.setDefaultCredential(
            Credential(user: "ada", password: "123£", persistence: .permanent),
            for: apiSpace
        )
        var info = stat()
        #expect(stat(file.path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(stat(file.deletingLastPathComponent().path, &info) == 0 && info.st_mode & 0o777 == 0o700)
        let second = CredentialStorage(fileURL: file)
        let found = try #require(try second.defaultCredential(for: apiSpace))
        #expect(found.password == "123£")
        #expect(found.persistence == .permanent)
        let text = readText(file.path)
        #expect(text.contains("\"format\" : \"sesame-credential-store\""))
        #expect(text.contains("\"version\" : 1"))
        try second.remove(found, for: apiSpace)
        #expect(try first.credentials(for: apiSpace).isEmpty)
    }

    @Test func aSymlinkedLockIsRefusedAndItsTargetNeverCreated() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("credentials.json")
        let target = directory.appendingPathComponent("planted-by-someone-else")
        #expect(symlink(target.path, file.path + ".lock") == 0)
        let error = #expect(throws: SesameError.self) {
            try CredentialStorage(fileURL: file).setDefaultCredential(
                Credential(user: "ada", password: "x", persistence: .permanent),
                for: apiSpace
            )
        }
        #expect(error?.code == .credentialStoreFailed)
        #expect(error?.description.contains("symbolic link") == true, "\(String(describing: error))")
        #expect(!FileManager.default.fileExists(atPath: target.path))
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    @Test(arguments: [0o777, 0o775, 0o1777])
    func aStoreInAFolderOthersCanWriteIsRefused(mode: Int) throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let folder = directory.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        #expect(chmod(folder.path, mode_t(mode)) == 0)
        let storage = CredentialStorage(fileURL: folder.appendingPathComponent("credentials.json"))
        for attempt in ["write", "read"] {
            let error = #expect(throws: SesameError.self, "\(attempt)") {
                if attempt == "write" {
                    try storage.setDefaultCredential(
                        Credential(user: "ada", password: "x", persistence: .permanent),
                        for: apiSpace
                    )
                } else {
                    _ = try storage.credentials(for: apiSpace)
                }
            }
            #expect(error?.code == .credentialStoreFailed)
            #expect(error?.description.contains("writable by") == true, "\(String(describing: error))")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("credentials.json").path))
        // The same folder made private again is fine.
        #expect(chmod(folder.path, 0o700) == 0)
        try storage.setDefaultCredential(Credential(user: "ada", password: "x", persistence: .permanent), for: apiSpace)
    }

    @Test(arguments: [
        "not json at all",
        "{\"format\": \"sesame-credential-store\", \"version\": 1, \"entries\": [{\"user\": 3}]}",
        "{\"format\": \"something-else\", \"version\": 1, \"entries\": []}",
        "{\"format\": \"sesame-credential-store\", \"version\": 99, \"entries\": []}",
        "",
    ])
    func aCorruptStoreIsAnErrorNamingItAndIsLeftAsItWas(contents: String) throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("credentials.json")
        try Data(contents.utf8).write(to: file)
        let storage = CredentialStorage(fileURL: file)
        let error = #expect(throws: SesameError.self) {
            try storage.setDefaultCredential(
                Credential(user: "ada", password: "x", persistence: .permanent),
                for: apiSpace
            )
        }
        #expect(error?.code == .credentialStoreCorrupt)
        #expect(error?.description.contains(file.path) == true)
        #expect(readText(file.path) == contents)
        #expect(throws: SesameError.self) { try storage.credentials(for: apiSpace) }
    }

    @Test func changesAreAnnounced() async throws {
        let storage = CredentialStorage()
        let changes = storage.changes
        try storage.setDefaultCredential(
            Credential(user: "ada", password: "x", persistence: .forSession),
            for: apiSpace
        )
        try storage.remove(Credential(user: "ada", password: "x", persistence: .forSession), for: apiSpace)
        var seen: [CredentialStorage.Change.Kind] = []
        for await change in changes {
            seen.append(change.kind)
            if seen.count == 3 { break }
        }
        #expect(seen == [.added, .defaultChanged, .removed])
    }

    @Test func ownChangesReachObserversBeforeTheCallReturnsAndAnEqualCredentialAgainIsNoChange() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let storage = CredentialStorage(fileURL: directory.appendingPathComponent("credentials.json"))
        let seen = LockedValue<[CredentialStorage.Change.Kind]>([])
        let observation = storage.observeChanges { change in seen.withLock { $0.append(change.kind) } }
        let session = Credential(user: "ada", password: "x", persistence: .forSession)
        try storage.set(session, for: apiSpace)
        #expect(seen.withLock { $0 } == [.added])
        try storage.set(session, for: apiSpace)
        #expect(seen.withLock { $0 } == [.added], "the same credential again changes nothing")
        try storage.setDefaultCredential(session, for: apiSpace)
        #expect(seen.withLock { $0 } == [.added, .defaultChanged])
        try storage.set(Credential(user: "bob", password: "y", persistence: .permanent), for: apiSpace)
        #expect(seen.withLock { $0 } == [.added, .defaultChanged, .added], "a permanent one, announced at once")
        // Only a default that was set is the designated one.
        try storage.remove(session, for: apiSpace)
        #expect(try storage.designatedDefaultCredential(for: apiSpace) == nil)
        #expect(try storage.defaultCredential(for: apiSpace)?.user == "bob", "the only one, for default handling")
        observation.cancel()
        try storage.set(session, for: apiSpace)
        #expect(seen.withLock { $0 }.count == 4, "nothing after the observation ends")
    }

    @Test func concurrentWritersInOneProcessLoseNothing() async throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        let file = directory.appendingPathComponent("credentials.json")
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<8 {
                group.addTask {
                    let storage = CredentialStorage(fileURL: file)  // each its own descriptor and lock
                    for index in 0..<10 {
                        try storage.set(
                            Credential(user: "u\(writer)-\(index)", password: "p", persistence: .permanent),
                            for: apiSpace
                        )
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(try CredentialStorage(fileURL: file).credentials(for: apiSpace).count == 80)
    }

    @Test func netrcEntriesAndDefaults() throws {
        let netrc = try Netrc(
            parsing: """
                machine api.example login ada password "s3 cret"
                macdef init
                cd /pub
                quit

                machine other login bob password x
                default login anonymous password guest
                """
        )
        #expect(netrc.entry(for: "API.example")?.password == "s3 cret")
        #expect(netrc.entry(for: "other")?.login == "bob")
        #expect(netrc.entry(for: "elsewhere")?.login == "anonymous")
        let error = #expect(throws: SesameError.self) { try Netrc(parsing: "machine a login", source: "/x/.netrc") }
        #expect(error?.code == .netrcInvalid)
        #expect(error?.description.contains("/x/.netrc:1") == true)
        #expect(throws: SesameError.self) { try Netrc(parsing: "password before machine") }
    }
}
