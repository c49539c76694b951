import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// The items a store keeps beside its passwords (``StoredItem``): the file store under its lock,
/// the Secret Service through libsecret's file backend, and the keyring that still reads what
/// only the file has.
@Suite struct StoredItemTests {
    func item(_ id: String, _ itemClass: String = "genp", data: String = "secret") -> StoredItem {
        StoredItem(id: id, itemClass: itemClass, attributes: ["s": "s:\(id)"], data: Array(data.utf8), label: id)
    }

    @Test func theFileStoreKeepsItemsInAFileOfTheirOwnByClass() throws {
        let folder = try ScratchFolder.make("items")
        let store = FileCredentialStore(fileURL: folder.appendingPathComponent("credentials.json"))
        #expect(store.itemsFileURL.lastPathComponent == "credentials.items.json")
        #expect(try store.items(ofClass: "genp").isEmpty)
        try store.modifyItems(ofClass: "genp") { $0 + [item("a"), item("b")] }
        try store.modifyItems(ofClass: "cert") { $0 + [item("c", "cert")] }
        try store.modifyItems(ofClass: "genp") { items in
            items.filter { $0.id != "a" }.map {
                var changed = $0
                changed.data = Array("new".utf8)
                return changed
            }
        }
        #expect(try store.items(ofClass: "genp") == [item("b", data: "new")])
        #expect(try store.items(ofClass: "cert") == [item("c", "cert")])
        // The passwords file is untouched by items: an older Sesame reads and rewrites it as before.
        #expect(!FileManager.default.fileExists(atPath: store.path))
        let mode = try FileManager.default.attributesOfItem(atPath: store.itemsPath)[.posixPermissions] as? Int
        #expect(mode == 0o600)
    }

    @Test func aChangeThatBreaksTheRulesIsRefusedAndChangesNothing() throws {
        let folder = try ScratchFolder.make("items-rules")
        let store = FileCredentialStore(fileURL: folder.appendingPathComponent("credentials.json"))
        try store.modifyItems(ofClass: "genp") { _ in [item("a")] }
        try store.modifyItems(ofClass: "cert") { _ in [item("c", "cert")] }
        for change in [
            { (_: [StoredItem]) in [item("x"), item("x")] },  // one identifier twice
            { (_: [StoredItem]) in [item("k", "keys")] },  // another class
            { (_: [StoredItem]) in [item("c")] },  // another class's identifier
        ] {
            #expect(throws: SesameError.self) { try store.modifyItems(ofClass: "genp", change) }
        }
        #expect(try store.items(ofClass: "genp") == [item("a")])
    }

    @Test func anItemFileFromANewerSesameIsLeftAlone() throws {
        let folder = try ScratchFolder.make("items-newer")
        let store = FileCredentialStore(fileURL: folder.appendingPathComponent("credentials.json"))
        let newer = Data(#"{"format":"sesame-credential-items","version":9,"items":[]}"#.utf8)
        try newer.write(to: store.itemsFileURL)
        #expect(throws: SesameError.self) { try store.items(ofClass: "genp") }
        #expect(throws: SesameError.self) { try store.modifyItems(ofClass: "genp") { $0 + [item("a")] } }
        #expect(try Data(contentsOf: store.itemsFileURL) == newer)
    }

    @Test func aKeyringItemHoldsTheWholeItemAndOnlyAWellFormedOneIsRead() throws {
        let original = StoredItem(
            id: "id-1",
            itemClass: "keys",
            attributes: ["atag": "d:AQI="],
            data: [0, 255, 10],
            label: "key"
        )
        let secret = try SecretServiceAttributes.secret(of: original)
        #expect(SecretServiceAttributes.item(from: ["class": "keys", "id": "id-1"], secret: secret) == original)
        #expect(SecretServiceAttributes.item(from: ["class": "genp", "id": "id-1"], secret: secret) == nil)
        #expect(SecretServiceAttributes.item(from: ["class": "keys", "id": "id-2"], secret: secret) == nil)
        #expect(SecretServiceAttributes.item(from: ["class": "keys", "id": "id-1"], secret: "password") == nil)
    }

    @Test(
        .enabled(if: SecretServiceFileBackendTests.available, "libsecret-1-0 is installed by scripts/install-deps.sh")
    )
    func theKeyringKeepsItemsAndTakesOverWhatOnlyTheFileHad() async throws {
        let folder = try ScratchFolder.make("items-keyring").path
        await #expect(processExitsWith: .success) { [folder = folder as String] in
            useFileBackend(folder)
            let keyring = orExit { try SecretServiceCredentialStore() }
            let file = FileCredentialStore(path: folder + "/credentials.json")
            let old = StoredItem(id: "old", itemClass: "genp", attributes: [:], data: Array("o".utf8))
            let kept = StoredItem(id: "kept", itemClass: "genp", attributes: [:], data: Array("k".utf8))
            orExit { try file.modifyItems(ofClass: "genp") { _ in [old, kept] } }
            let both = KeyringWithFileStore(keyring: keyring, file: file)
            expectOrExit(
                Set(orExit { try both.items(ofClass: "genp") }.map(\.id)) == ["old", "kept"],
                "file items read"
            )

            // Changing one moves it to the keyring; the unchanged one stays in the file.
            var changed = old
            changed.data = Array("changed".utf8)
            let fresh = StoredItem(id: "new", itemClass: "genp", attributes: [:], data: Array("n".utf8))
            orExit {
                try both.modifyItems(ofClass: "genp") { items in
                    items.map { $0.id == "old" ? changed : $0 } + [fresh]
                }
            }
            expectOrExit(
                Set(orExit { try keyring.items(ofClass: "genp") }.map(\.id)) == ["old", "new"],
                "keyring has the changed and new items"
            )
            expectOrExit(orExit { try file.items(ofClass: "genp") }.map(\.id) == ["kept"], "file keeps the unchanged")
            expectOrExit(orExit { try both.items(ofClass: "genp") }.count == 3, "three items in all")

            // Removing removes from both; no stale copy comes back.
            orExit { try both.modifyItems(ofClass: "genp") { items in items.filter { $0.id == "new" } } }
            expectOrExit(orExit { try both.items(ofClass: "genp") }.map(\.id) == ["new"], "only new is left")
            expectOrExit(orExit { try file.items(ofClass: "genp") }.isEmpty, "the file is empty")
            exit(0)
        }
    }
}
