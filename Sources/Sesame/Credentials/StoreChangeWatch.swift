import FoundationEssentials
import Glibc

/// Announces changes to a store's permanent entries made by any process, for stores that signal
/// them (``CredentialStore/externalChanges``): on each signal the entries are read again and
/// compared with the last reading, so what is announced is what changed, whoever changed it.
final class StoreChangeWatch: Sendable {
    private struct Key: Hashable {
        var space: ProtectionSpace
        var user: String
        var origin: StoredCredential.Origin
    }

    private struct Summary: Equatable {
        /// A hash of the password (compared, never kept as such).
        var password: Int
        var isDefault: Bool
    }

    private let store: any CredentialStore
    private let announce: @Sendable ([CredentialStorage.Change]) -> Void
    /// The last reading; held while a reading is compared with it, so two refreshes (the
    /// signal's and the storage's own) take turns and the snapshot never goes back in time.
    private let snapshot = LockedValue<[Key: Summary]>([:])
    private let task = LockedValue<Task<Void, Never>?>(nil)

    /// Starts watching `store`; nil when it cannot signal changes.
    init?(store: any CredentialStore, announce: @escaping @Sendable ([CredentialStorage.Change]) -> Void) {
        guard let signals = store.externalChanges else { return nil }
        self.store = store
        self.announce = announce
        // The reading to compare with, taken after the watch began, so no change falls between.
        let entries = (try? store.entries(for: nil)) ?? []
        snapshot.withLock { $0 = Self.summarize(entries) }
        let watching = Task.detached { [self] in
            for await _ in signals { refresh() }
        }
        task.withLock { $0 = watching }
    }

    /// Ends the watch.
    func stop() {
        task.withLock { $0?.cancel() }
    }

    /// Reads the store again and announces what changed since the last reading (also called by
    /// the storage right after its own write, so the change is announced before the write returns).
    func refresh() {
        let changes = snapshot.withLock { before -> [CredentialStorage.Change] in
            // A failed reading (a locked keyring) announces nothing and keeps the last one.
            guard let entries = try? store.entries(for: nil) else { return [] }
            let now = Self.summarize(entries)
            defer { before = now }
            return Self.differences(from: before, to: now)
        }
        if !changes.isEmpty { announce(changes) }
    }

    private static func summarize(_ entries: [StoredCredential]) -> [Key: Summary] {
        var result: [Key: Summary] = [:]
        for entry in entries {
            let key = Key(space: entry.protectionSpace, user: entry.user, origin: entry.origin)
            result[key] = Summary(password: entry.password.hashValue, isDefault: entry.isDefault)
        }
        return result
    }

    /// Additions (a new or changed password), then removals, then new defaults, each in a
    /// stable order.
    private static func differences(from before: [Key: Summary], to now: [Key: Summary]) -> [CredentialStorage.Change] {
        func ordered(_ changes: [CredentialStorage.Change]) -> [CredentialStorage.Change] {
            changes.sorted {
                ($0.protectionSpace.description, $0.user ?? "") < ($1.protectionSpace.description, $1.user ?? "")
            }
        }
        let added = now.filter { before[$0.key]?.password != $0.value.password }.keys.map {
            CredentialStorage.Change(kind: .added, protectionSpace: $0.space, user: $0.user)
        }
        let removed = before.keys.filter { now[$0] == nil }.map {
            CredentialStorage.Change(kind: .removed, protectionSpace: $0.space, user: $0.user)
        }
        let defaultsBefore = defaults(before)
        let defaultsNow = defaults(now)
        var defaultChanges = defaultsNow.filter { defaultsBefore[$0.key] != $0.value }.map {
            CredentialStorage.Change(kind: .defaultChanged, protectionSpace: $0.key, user: $0.value)
        }
        for space in defaultsBefore.keys where defaultsNow[space] == nil {
            defaultChanges.append(.init(kind: .defaultChanged, protectionSpace: space, user: nil))
        }
        return ordered(added) + ordered(removed) + ordered(defaultChanges)
    }

    private static func defaults(_ summaries: [Key: Summary]) -> [ProtectionSpace: String] {
        var result: [ProtectionSpace: String] = [:]
        for (key, summary) in summaries where summary.isDefault { result[key.space] = key.user }
        return result
    }
}
