import Foundation

/// The file behind `.permanent` credentials (DESIGN section 6): a versioned JSON document, mode
/// 0600 in a 0700 directory, replaced atomically (temporary file, fsync, rename) while an advisory
/// lock on `<file>.lock` is held, so writers in several processes take turns and each sees the
/// others' entries. A file Sesame cannot read is an error naming it, and is never overwritten.
///
/// Passwords are stored as written, protected by the file's permissions (as `.netrc` and curl's
/// files are): the store for machines without a session bus. Where a Secret Service answers,
/// ``SecretServiceCredentialStore`` keeps them encrypted in the user's keyring instead.
public struct FileCredentialStore: CredentialStore {
    static let format = "sesame-credential-store"
    static let version = 1

    struct Entry: Codable, Equatable, Sendable {
        var space: ProtectionSpace
        var user: String
        var password: String
        var isDefault: Bool
    }

    struct Document: Codable, Sendable {
        var format: String
        var version: Int
        var entries: [Entry]
    }

    let path: String

    /// A store in `fileURL` (created, with its folder, on the first write).
    public init(fileURL: URL) { path = fileURL.path }

    init(path: String) { self.path = path }

    /// The file.
    public var fileURL: URL { URL(fileURLWithPath: path) }
    public var location: String { path }

    var lockPath: String { path + ".lock" }
    /// The folder the store, its lock and its temporary files are in.
    var folder: String { (path as NSString).deletingLastPathComponent }

    /// The file the shared storage uses where there is no keyring: `$XDG_DATA_HOME/sesame/credentials.json`,
    /// else `~/.local/share/sesame/credentials.json`.
    public static var standard: FileCredentialStore { FileCredentialStore(path: defaultPath) }

    /// The default location: `$XDG_DATA_HOME/sesame/credentials.json`, else
    /// `~/.local/share/sesame/credentials.json`.
    static var defaultPath: String {
        let environment = ProcessInfo.processInfo.environment
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return "\(data)/sesame/credentials.json"
        }
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        return "\(home)/.local/share/sesame/credentials.json"
    }

    /// The entries on disk (none when the file does not exist yet).
    func read() throws(SesameError) -> [Entry] {
        let bytes: [UInt8]?
        do {
            try PosixFile.requirePrivateFolder(folder)
        } catch {
            throw SesameError(.credentialStoreFailed, "credential store \(error.description)")
        }
        do {
            bytes = try UserFile.readIfPresent(path, as: .credentialStore)
        } catch {
            throw SesameError(.credentialStoreFailed, error.detail)
        }
        guard let bytes else { return [] }
        return try decode(bytes)
    }

    /// Applies `change` to the entries under the lock and writes the result; returns it.
    @discardableResult
    func modify(_ change: (inout [Entry]) throws -> Void) throws -> [Entry] {
        do {
            try PosixFile.makeDirectories(folder, mode: 0o700)
            try PosixFile.requirePrivateFolder(folder)
            // Before the lock: a FIFO or a device there would otherwise be found only once the
            // lock is held (and a FIFO read would wait for ever).
            do {
                try UserFile.checkIfPresent(path, as: .credentialStore)
            } catch {
                throw SesameError(.credentialStoreFailed, error.detail)
            }
            let lock = try FileLock(path: lockPath)
            var entries = try read()
            try change(&entries)
            let document = Document(format: Self.format, version: Self.version, entries: entries)
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try PosixFile.replace(path, with: Array(try encoder.encode(document)) + [0x0A], mode: 0o600)
            lock.unlock()
            return entries
        } catch let error as PosixFileError {
            throw SesameError(.credentialStoreFailed, "credential store \(error.description)")
        }
    }

    /// The entries of a store file's bytes (internal for the fuzzer: `Fuzz/CredentialStoreFuzz.swift`).
    func decode(_ bytes: [UInt8]) throws(SesameError) -> [Entry] {
        struct Header: Decodable {
            var format: String?
            var version: Int?
        }
        let data = Data(bytes)
        guard let header = try? JSONDecoder().decode(Header.self, from: data) else {
            throw SesameError(
                .credentialStoreCorrupt,
                "'\(path)' is not a Sesame credential store (not JSON); left as it is"
            )
        }
        guard header.format == Self.format, let version = header.version else {
            throw SesameError(
                .credentialStoreCorrupt,
                "'\(path)' is not a Sesame credential store (no format/version); left as it is"
            )
        }
        guard version <= Self.version else {
            throw SesameError(
                .credentialStoreCorrupt,
                "'\(path)' has format version \(version), newer than this Sesame reads (\(Self.version)); left as it is"
            )
        }
        do {
            return try JSONDecoder().decode(Document.self, from: data).entries
        } catch {
            throw SesameError(
                .credentialStoreCorrupt,
                "'\(path)' has a malformed entry (\(Self.explain(error))); left as it is"
            )
        }
    }

    // MARK: - CredentialStore

    public func entries(for spaces: [ProtectionSpace]?) throws(SesameError) -> [StoredCredential] {
        let wanted = spaces.map(Set.init)
        return try read().compactMap { entry in
            guard wanted?.contains(entry.space) ?? true else { return nil }
            return StoredCredential(
                protectionSpace: entry.space,
                user: entry.user,
                password: entry.password,
                isDefault: entry.isDefault
            )
        }
    }

    public func save(_ stored: StoredCredential) throws(SesameError) {
        let space = stored.protectionSpace
        try modifyTyped { entries in
            let isDefault =
                stored.isDefault || entries.first { $0.space == space && $0.user == stored.user }?.isDefault == true
            if stored.isDefault {
                for index in entries.indices where entries[index].space == space { entries[index].isDefault = false }
            }
            entries.removeAll { $0.space == space && $0.user == stored.user }
            entries.append(.init(space: space, user: stored.user, password: stored.password, isDefault: isDefault))
        }
    }

    public func setDefault(user: String?, for space: ProtectionSpace) throws(SesameError) -> Bool {
        var found = user == nil
        try modifyTyped { entries in
            found = found || entries.contains { $0.space == space && $0.user == user }
            guard found else { return }
            for index in entries.indices where entries[index].space == space {
                entries[index].isDefault = entries[index].user == user
            }
        }
        return found
    }

    public func remove(user: String, from space: ProtectionSpace) throws(SesameError) -> Bool {
        guard try read().contains(where: { $0.space == space && $0.user == user }) else { return false }
        var removed = false
        try modifyTyped { entries in
            let before = entries.count
            entries.removeAll { $0.space == space && $0.user == user }
            removed = entries.count != before
        }
        return removed
    }

    private func modifyTyped(_ change: (inout [Entry]) -> Void) throws(SesameError) {
        do {
            try modify(change)
        } catch let error as SesameError {
            throw error
        } catch {
            throw SesameError(.credentialStoreFailed, "credential store '\(path)': \(error)")
        }
    }

    private static func explain(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        switch error {
        case .dataCorrupted(let context), .keyNotFound(_, let context), .typeMismatch(_, let context),
            .valueNotFound(_, let context):
            let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
            return "at \(path.isEmpty ? "top level" : path): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
