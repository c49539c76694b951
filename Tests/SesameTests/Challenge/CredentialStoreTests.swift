import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// ``CredentialStorage`` over a ``CredentialStore`` of the caller's own: what reaches the store,
/// and that a failing store is reported, never replaced.
@Suite struct CredentialStoreTests {
    /// A store in memory that records calls and fails on demand.
    final class RecordingStore: CredentialStore, @unchecked Sendable {
        // @unchecked: `state` is only touched under its lock.
        struct State {
            var entries: [StoredCredential] = []
            var failure: SesameError?
        }
        let state = LockedValue(State())
        var location: String { "memory (test)" }

        func entries(for spaces: [ProtectionSpace]?) throws(SesameError) -> [StoredCredential] {
            let (entries, failure) = state.withLock { ($0.entries, $0.failure) }
            if let failure { throw failure }
            return entries.filter { spaces?.contains($0.protectionSpace) ?? true }
        }

        func save(_ entry: StoredCredential) throws(SesameError) {
            if let failure = state.withLock({ $0.failure }) { throw failure }
            state.withLock { state in
                if entry.isDefault {
                    for index in state.entries.indices
                    where state.entries[index].protectionSpace == entry.protectionSpace {
                        state.entries[index].isDefault = false
                    }
                }
                state.entries.removeAll { $0.protectionSpace == entry.protectionSpace && $0.user == entry.user }
                state.entries.append(entry)
            }
        }

        func setDefault(user: String?, for space: ProtectionSpace) throws(SesameError) -> Bool { false }

        func remove(user: String, from space: ProtectionSpace) throws(SesameError) -> Bool {
            if let failure = state.withLock({ $0.failure }) { throw failure }
            return state.withLock { state in
                let before = state.entries.count
                state.entries.removeAll { $0.protectionSpace == space && $0.user == user }
                return state.entries.count != before
            }
        }
    }

    @Test func permanentCredentialsGoToTheStoreAndSessionOnesStayInMemory() throws {
        let store = RecordingStore()
        let storage = CredentialStorage(store: store)
        try storage.setDefaultCredential(
            Credential(user: "ada", password: "p1", persistence: .permanent),
            for: apiSpace
        )
        try storage.set(Credential(user: "bob", password: "p2", persistence: .forSession), for: apiSpace)
        try storage.set(Credential(user: "eve", password: "p3", persistence: .none), for: apiSpace)
        #expect(store.state.withLock { $0.entries.map(\.user) } == ["ada"])
        #expect(store.state.withLock { $0.entries.first?.isDefault } == true)
        #expect(Set(try storage.credentials(for: apiSpace).keys) == ["ada", "bob"])
        #expect(try storage.defaultCredential(for: apiSpace)?.user == "ada")
        #expect((try storage.store)?.location == "memory (test)")
        #expect(storage.fileURL == nil)
        try storage.remove(Credential(user: "ada", password: "", persistence: .permanent), for: apiSpace)
        #expect(store.state.withLock { $0.entries.isEmpty })
    }

    @Test func aFailingStoreIsReportedForReadsAndWritesAndNothingElseIsWritten() throws {
        let store = RecordingStore()
        store.state.withLock { $0.failure = SesameError(.credentialStoreLocked, "the keyring is locked") }
        let storage = CredentialStorage(store: store)
        let write = #expect(throws: SesameError.self) {
            try storage.set(Credential(user: "ada", password: "p", persistence: .permanent), for: apiSpace)
        }
        #expect(write?.code == .credentialStoreLocked)
        let read = #expect(throws: SesameError.self) { try storage.defaultCredential(for: apiSpace) }
        #expect(read?.code == .credentialStoreLocked)
        #expect(throws: SesameError.self) { try storage.allCredentials }
        // Nothing went to memory in the store's place either.
        store.state.withLock { $0.failure = nil }
        #expect(try storage.credentials(for: apiSpace).isEmpty)
    }

    @Test func anotherProgramsPasswordAnswersOnlyWhenSesameHasNoneForTheUser() throws {
        let store = RecordingStore()
        let storage = CredentialStorage(store: store)
        try store.save(
            StoredCredential(protectionSpace: apiSpace, user: "nina", password: "theirs", origin: .networkPassword)
        )
        #expect(try storage.defaultCredential(for: apiSpace)?.password == "theirs")
        store.state.withLock {
            $0.entries.append(StoredCredential(protectionSpace: apiSpace, user: "nina", password: "ours"))
        }
        #expect(try storage.credentials(for: apiSpace)["nina"]?.password == "ours")
    }

    @Test func storedCredentialsDescribeThemselvesWithoutThePassword() {
        let entry = StoredCredential(protectionSpace: apiSpace, user: "ada", password: "s3cret", isDefault: true)
        #expect(!entry.description.contains("s3cret"))
        #expect(entry.description.contains("ada"))
        #expect(entry.credential.persistence == .permanent)
    }
}
