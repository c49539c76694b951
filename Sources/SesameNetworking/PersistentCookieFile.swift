import Foundation
import Sesame

/// The file that keeps a persistent `HTTPCookieStorage`'s cookies across launches.
///
/// Where and how FoundationNetworking keeps them, so that a program keeps its cookies when it
/// moves between the two: `$XDG_DATA_HOME/<program>/.cookies.<storage>` (else
/// `~/.local/share/…`), a property list of one property dictionary per cookie. Only cookies with
/// an expiry date are kept (session cookies end with the process, as on Apple's platforms).
///
/// Written as Sesame writes credentials: in a folder only its owner can change, mode 0600,
/// replaced atomically under an advisory lock, each write applying this process's changes to what
/// the file holds then, so processes sharing the file keep each other's cookies. A file Sesame
/// cannot read as such a list is left as it is: the storage then keeps its cookies in memory and
/// says why once, on standard error. Cookies read back pass Sesame's cookie rules again (a cookie
/// for a public suffix planted in the file is dropped).
final class PersistentCookieFile: Sendable {
    let path: String
    /// Changes not yet written, by the file's key for each cookie; nil: removed. The latest
    /// change to a cookie wins.
    private let pending = LockedValue<[String: Cookie?]>([:])
    /// Held while one writer takes the pending changes and writes them, so changes reach the file
    /// in the order they were made.
    private let writer = NSLock()
    /// Why the file is no longer written (set once, reported once).
    private let refusal = LockedValue<String?>(nil)

    init(path: String) {
        self.path = path
        Self.open.withLock { files in
            if files.isEmpty { atexit { PersistentCookieFile.writeAllAtExit() } }
            files.append(self)
        }
    }

    /// Every file of the process: changes still waiting when the process exits are written then
    /// (the storages live as long as the process, so the list only grows by one per storage).
    private static let open = LockedValue<[PersistentCookieFile]>([])

    private static func writeAllAtExit() {
        // Every file, not only those with changes waiting: a write in progress on another thread
        // took its changes already, and this waits for it to finish.
        for file in open.withLock({ $0 }) { file.write() }
    }

    /// The file of the storage called `name` ("shared", or a group identifier) for this program.
    convenience init(storageName name: String) {
        // A group identifier is a name, never a path: '/' and '%' are escaped so that it cannot
        // leave the program's folder.
        let escaped = name.unicodeScalars.map { scalar -> String in
            switch scalar {
            case "/", "%", "\u{0}": String(format: "%%%02X", scalar.value)
            default: String(scalar)
            }
        }.joined()
        self.init(path: "\(Self.programFolder)/.cookies.\(escaped)")
    }

    /// `<XDG data folder>/<program>`: the program's name is the last component of the main
    /// bundle's path without its extension, as FoundationNetworking names it.
    static var programFolder: String {
        let environment = ProcessInfo.processInfo.environment
        let data: String
        if let xdg = environment["XDG_DATA_HOME"], xdg.hasPrefix("/") {
            data = xdg
        } else {
            let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            data = "\(home)/.local/share"
        }
        var program = (Bundle.main.bundlePath as NSString).lastPathComponent
        if let dot = program.lastIndex(of: "."), dot != program.startIndex { program = String(program[..<dot]) }
        if program.isEmpty || program == "." || program == ".." { program = "sesame" }
        return "\(data)/\(program)"
    }

    var folder: String { (path as NSString).deletingLastPathComponent }

    // MARK: - Reading

    /// The cookies the file holds (none when it does not exist yet, or cannot be read: then it
    /// is left alone for good).
    func load() -> [Cookie] {
        do {
            return try readEntries().values.compactMap(Self.cookie(from:))
        } catch {
            stop(because: error)
            return []
        }
    }

    /// The file's entries as they are, by key (entries Sesame does not understand are kept).
    private func readEntries() throws(SesameError) -> [String: Any] {
        let bytes: [UInt8]?
        do {
            try PosixFile.requirePrivateFolder(folder)
        } catch {
            throw SesameError(.fileUnreadable, "cookie file \(error.description)")
        }
        bytes = try UserFile.readIfPresent(path, as: .cookies)
        guard let bytes, !bytes.isEmpty else { return [:] }
        let list = try? PropertyListSerialization.propertyList(from: Data(bytes), options: [], format: nil)
        guard let entries = list as? [String: Any], entries.values.allSatisfy({ $0 is [String: Any] }) else {
            throw SesameError(
                .fileUnreadable,
                "'\(path)' is not a cookie file (a property list of cookie properties); left as it is"
            )
        }
        return entries
    }

    /// The cookie of one entry; nil for one without a name, domain or expiry date.
    static func cookie(from entry: Any) -> Cookie? {
        guard let properties = entry as? [String: Any], let name = properties["Name"] as? String,
            let domain = properties["Domain"] as? String, !domain.isEmpty, let expires = date(properties["Expires"])
        else { return nil }
        var cookie = Cookie(
            name: name,
            value: properties["Value"] as? String ?? "",
            domain: domain.hasPrefix(".") ? String(domain.dropFirst()) : domain,
            isHostOnly: !domain.hasPrefix("."),
            path: properties["Path"] as? String ?? "/",
            expires: expires,
            isSecure: flag(properties["Secure"]),
            isHTTPOnly: flag(properties["HttpOnly"]),
            sameSite: properties["SameSite"] as? String
        )
        if let created = properties["Created"] as? NSNumber {
            cookie.created = Date(timeIntervalSinceReferenceDate: created.doubleValue)
        }
        return cookie
    }

    /// Seconds since 1970 (FoundationNetworking's form), or a date.
    private static func date(_ value: Any?) -> Date? {
        if let date = value as? Date { return date }
        if let seconds = value as? NSNumber { return Date(timeIntervalSince1970: seconds.doubleValue) }
        return nil
    }

    private static func flag(_ value: Any?) -> Bool {
        if let value = value as? Bool { return value }
        if let value = value as? String { return ["true", "yes", "1"].contains(value.lowercased()) }
        if let value = value as? NSNumber { return value.intValue != 0 }
        return false
    }

    // MARK: - Writing

    /// The file's key for `cookie` (FoundationNetworking's: domain as written, path, name).
    static func key(_ cookie: Cookie) -> String {
        (cookie.isHostOnly ? cookie.domain : "." + cookie.domain) + cookie.path + cookie.name
    }

    /// The entry written for `cookie`, in FoundationNetworking's property names.
    static func entry(_ cookie: Cookie) -> [String: Any] {
        var entry: [String: Any] = [
            "Name": cookie.name, "Value": cookie.value, "Path": cookie.path,
            "Domain": cookie.isHostOnly ? cookie.domain : "." + cookie.domain,
            "Version": 0, "Created": cookie.created.timeIntervalSinceReferenceDate,
        ]
        // FoundationNetworking reads any string as Secure and a Boolean as not: written so that
        // it reads the flag back.
        if cookie.isSecure { entry["Secure"] = "TRUE" }
        if let expires = cookie.expires { entry["Expires"] = expires.timeIntervalSince1970 }
        if cookie.isHTTPOnly { entry["HttpOnly"] = "TRUE" }
        if let sameSite = cookie.sameSite { entry["SameSite"] = sameSite }
        return entry
    }

    /// Takes note of a change to the storage (called under the store's lock: no I/O here).
    /// - Returns: true when nothing was waiting before: the change needs a ``write()``.
    func record(_ change: CookieStore.Change) -> Bool {
        pending.withLock { pending in
            let wasEmpty = pending.isEmpty
            for cookie in change.removed { pending[Self.key(cookie)] = .some(nil) }
            // A session cookie is not kept: one that replaces a kept cookie removes it.
            for cookie in change.stored { pending[Self.key(cookie)] = cookie.expires == nil ? .some(nil) : cookie }
            return wasEmpty
        }
    }

    /// Applies the changes recorded so far to the file.
    func write() {
        writer.withLock {
            let changes = pending.withLock { pending in
                defer { pending = [:] }
                return pending
            }
            guard !changes.isEmpty, refusal.withLock({ $0 == nil }) else { return }
            do {
                try PosixFile.makeDirectories(folder, mode: 0o700)
                try UserFile.checkIfPresent(path, as: .cookies)
                let lock = try FileLock(path: path + ".lock")
                var entries = try readEntries()
                for (key, cookie) in changes { entries[key] = cookie.map(Self.entry) }
                let now = Date()
                entries = entries.filter { _, entry in
                    guard let expires = Self.date((entry as? [String: Any])?["Expires"]) else { return true }
                    return expires > now
                }
                let data = try PropertyListSerialization.data(fromPropertyList: entries, format: .xml, options: 0)
                try PosixFile.replace(path, with: Array(data), mode: 0o600)
                lock.unlock()
            } catch {
                stop(because: error)
            }
        }
    }

    /// Leaves the file alone from now on, and says why once.
    private func stop(because error: any Error) {
        let reason =
            switch error {
            case let error as PosixFileError: "cookie file \(error.description)"
            case let error as SesameError: error.detail
            default: "cookie file '\(path)': \(error)"
            }
        let first = refusal.withLock { refusal in
            defer { refusal = refusal ?? reason }
            return refusal == nil
        }
        if first {
            FileHandle.standardError.write(
                Data("HTTPCookieStorage: cookies are kept in memory only: \(reason)\n".utf8)
            )
        }
    }
}
