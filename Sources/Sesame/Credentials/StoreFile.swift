import FoundationEssentials
import Glibc

/// A document a store file holds: a format name and version, and its records.
protocol StoreFileDocument: Codable, Sendable {
    var format: String { get set }
    var version: Int { get set }
    /// A document with no records (what a missing file reads as).
    static var empty: Self { get }
}

/// A versioned JSON document Sesame keeps for the user (DESIGN section 6): mode 0600 in a 0700
/// folder, replaced atomically (temporary file, fsync, rename) while an advisory lock on
/// `<file>.lock` is held, so writers in several processes take turns and each sees the others'
/// records. A file Sesame cannot read, or one a newer Sesame wrote, is an error naming it and is
/// never overwritten.
struct StoreFile<Document: StoreFileDocument> {
    let path: String
    let format: String
    let version: Int
    /// What the file is, for messages: "credential store".
    let name: String

    var lockPath: String { path + ".lock" }
    /// The folder the file, its lock and its temporary files are in.
    var folder: String { PathText.deletingLastComponent(path) }

    /// The document on disk (empty when the file does not exist yet).
    func read() throws(SesameError) -> Document {
        let bytes: [UInt8]?
        do {
            try PosixFile.requirePrivateFolder(folder)
        } catch {
            throw SesameError(.credentialStoreFailed, "\(name) \(error.description)")
        }
        do {
            bytes = try UserFile.readIfPresent(path, as: .credentialStore)
        } catch {
            throw SesameError(.credentialStoreFailed, error.detail)
        }
        guard let bytes else { return .empty }
        return try decode(bytes)
    }

    /// Applies `change` to the document under the lock and writes the result; returns it.
    @discardableResult
    func modify(_ change: (inout Document) throws -> Void) throws -> Document {
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
            var document = try read()
            try change(&document)
            document.format = format
            document.version = version
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
            try PosixFile.replace(path, with: Array(try encoder.encode(document)) + [0x0A], mode: 0o600)
            lock.unlock()
            return document
        } catch let error as PosixFileError {
            throw SesameError(.credentialStoreFailed, "\(name) \(error.description)")
        }
    }

    /// `modify` with every failure as a ``SesameError``.
    func modifyTyped(_ change: (inout Document) throws(SesameError) -> Void) throws(SesameError) {
        do {
            try modify { (document: inout Document) throws(SesameError) in try change(&document) }
        } catch let error as SesameError {
            throw error
        } catch {
            throw SesameError(.credentialStoreFailed, "\(name) '\(path)': \(error)")
        }
    }

    /// The document in a file's bytes.
    func decode(_ bytes: [UInt8]) throws(SesameError) -> Document {
        let data = Data(bytes)
        guard let header = try? JSONDecoder().decode(StoreFileHeader.self, from: data) else {
            throw SesameError(.credentialStoreCorrupt, "'\(path)' is not a Sesame \(name) (not JSON); left as it is")
        }
        guard header.format == format, let found = header.version else {
            throw SesameError(
                .credentialStoreCorrupt,
                "'\(path)' is not a Sesame \(name) (no format/version); left as it is"
            )
        }
        guard found <= version else {
            throw SesameError(
                .credentialStoreCorrupt,
                "'\(path)' has format version \(found), newer than this Sesame reads (\(version)); left as it is"
            )
        }
        do {
            return try JSONDecoder().decode(Document.self, from: data)
        } catch {
            throw SesameError(
                .credentialStoreCorrupt,
                "'\(path)' has a malformed entry (\(Self.explain(error))); left as it is"
            )
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

/// The fields every store file starts with, read before the rest.
private struct StoreFileHeader: Decodable {
    var format: String?
    var version: Int?
}
