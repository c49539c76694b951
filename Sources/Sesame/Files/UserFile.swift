import FoundationEssentials
import Glibc

/// Reads the files a user or a configuration names: certificates, keys, CRLs, `.netrc`, cookie
/// files, the credential store, request data.
///
/// One rule for all of them, so that no option can be pointed at something that hangs or
/// exhausts the process:
/// - only a regular file is read (a symbolic link to one is followed); a FIFO, a device such as
///   `/dev/zero`, a socket or a folder is refused with an error naming it, without waiting: the
///   file is opened non-blocking, and examined before a byte is read;
/// - each kind of file has a size limit, checked before the read and again while reading (a file
///   that grows meanwhile is refused too);
/// - the bytes are read in bounded pieces.
public enum UserFile {
    /// What a file holds: how it is named in errors, and how large it may be.
    public struct Kind: Sendable, Hashable, CustomStringConvertible {
        /// The name errors use ("certificate file").
        public let name: String
        /// The most bytes a file of this kind may hold.
        public let sizeLimit: Int

        /// A kind of file named `name` in errors and read up to `sizeLimit` bytes.
        public init(name: String, sizeLimit: Int) {
            self.name = name
            self.sizeLimit = sizeLimit
        }

        public var description: String { name }

        /// Certificates (PEM bundles of anchors, intermediates, pinned certificates): a trust
        /// bundle of tens of megabytes is fine (Debian's whole bundle is about 200 KB).
        public static let certificates = Kind(name: "certificate file", sizeLimit: 64 << 20)
        /// Certificate revocation lists: some CAs publish lists of over a hundred megabytes.
        public static let revocationLists = Kind(name: "CRL file", sizeLimit: 256 << 20)
        /// A PEM private key.
        public static let privateKey = Kind(name: "private key file", sizeLimit: 1 << 20)
        /// A PKCS#12 identity.
        public static let pkcs12 = Kind(name: "PKCS#12 file", sizeLimit: 1 << 20)
        /// A `.netrc` file.
        public static let netrc = Kind(name: ".netrc file", sizeLimit: 1 << 20)
        /// A Netscape cookie file (a store keeps at most 3,000 cookies of 4 KB).
        public static let cookies = Kind(name: "cookie file", sizeLimit: 32 << 20)
        /// Sesame's file credential store.
        public static let credentialStore = Kind(name: "credential store", sizeLimit: 16 << 20)
        /// A DER OCSP response.
        public static let ocspResponse = Kind(name: "OCSP response file", sizeLimit: 1 << 20)
        /// Request data read whole (curl's `-d @file`): curl's own limit for reading a file
        /// into memory.
        public static let requestData = Kind(name: "data file", sizeLimit: 1 << 30)
        /// A data file of the operating system's (the Public Suffix List).
        static let systemData = Kind(name: "system data file", sizeLimit: 16 << 20)
    }

    /// The whole of the regular file at `path`.
    /// - Throws: ``SesameError/Code/fileUnreadable`` when it does not exist, cannot be opened or
    ///   read, or is not a regular file; ``SesameError/Code/fileTooLarge`` past the kind's limit.
    ///   The error names the path.
    public static func read(_ path: String, as kind: Kind) throws(SesameError) -> [UInt8] {
        guard let bytes = try readIfPresent(path, as: kind) else {
            throw SesameError(.fileUnreadable, "\(kind) '\(path)': \(errnoText(ENOENT))")
        }
        return bytes
    }

    /// Like ``read(_:as:)``, but nil when nothing is at `path`.
    public static func readIfPresent(_ path: String, as kind: Kind) throws(SesameError) -> [UInt8]? {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY)
        guard fd >= 0 else {
            if errno == ENOENT { return nil }
            throw SesameError(.fileUnreadable, "\(kind) '\(path)': \(errnoText(errno))")
        }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else {
            throw SesameError(.fileUnreadable, "\(kind) '\(path)': \(errnoText(errno))")
        }
        try requireRegular(status, path: path, kind: kind)
        return try readAll(fd, expected: Int(status.st_size), path: path, kind: kind)
    }

    /// Standard input, whole, up to the kind's limit (curl's `-d @-`). Waits for its end as curl
    /// does: it is what the user chose to pipe in.
    public static func readStandardInput(as kind: Kind) throws(SesameError) -> [UInt8] {
        try readAll(STDIN_FILENO, expected: 0, path: "standard input", kind: kind)
    }

    /// Refuses what is at `path` when it is there and is not a regular file of at most the
    /// kind's size; nothing there passes. For files opened by others afterwards (a store's, or
    /// a file that is about to be replaced).
    public static func checkIfPresent(_ path: String, as kind: Kind) throws(SesameError) {
        var status = stat()
        guard stat(path, &status) == 0 else {
            if errno == ENOENT { return }
            throw SesameError(.fileUnreadable, "\(kind) '\(path)': \(errnoText(errno))")
        }
        try requireRegular(status, path: path, kind: kind)
    }

    /// The regular files of a folder (links to them followed) and their bytes, in name order,
    /// with every other entry skipped and named: a CA folder (curl's `--capath`) holds links and
    /// other files beside certificates. Bounded: at most `maximumFiles` files, and the kind's size
    /// limit over all of them together.
    public static func readFolder(
        _ path: String,
        as kind: Kind,
        maximumFiles: Int = 10_000
    ) throws(SesameError) -> (files: [(name: String, bytes: [UInt8])], skipped: [String]) {
        guard let directory = opendir(path) else {
            throw SesameError(.fileUnreadable, "folder '\(path)': \(errnoText(errno))")
        }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            if name == "." || name == ".." { continue }
            names.append(name)
            guard names.count <= maximumFiles * 2 else { break }
        }
        closedir(directory)
        var files: [(name: String, bytes: [UInt8])] = []
        var skipped: [String] = []
        var total = 0
        for name in names.sorted() {
            let file = path.hasSuffix("/") ? path + name : path + "/" + name
            var status = stat()
            guard stat(file, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
                skipped.append("'\(file)' is not a regular file")
                continue
            }
            guard files.count < maximumFiles else {
                throw SesameError(.fileTooLarge, "folder '\(path)' holds more than \(maximumFiles) files")
            }
            let bytes: [UInt8]
            do {
                bytes = try read(file, as: Kind(name: kind.name, sizeLimit: kind.sizeLimit - total))
            } catch let error where error.code == .fileTooLarge {
                throw SesameError(
                    .fileTooLarge,
                    "folder '\(path)': its files hold more than the \(kind.sizeLimit) bytes a \(kind) may"
                )
            } catch {
                skipped.append(error.detail)
                continue
            }
            total += bytes.count
            files.append((name, bytes))
        }
        return (files, skipped)
    }

    private static func requireRegular(_ status: stat, path: String, kind: Kind) throws(SesameError) {
        let type = status.st_mode & S_IFMT
        guard type == S_IFREG else {
            let what: String
            switch type {
            case S_IFIFO: what = "a FIFO"
            case S_IFCHR: what = "a character device"
            case S_IFBLK: what = "a block device"
            case S_IFSOCK: what = "a socket"
            case S_IFDIR: what = "a folder"
            default: what = "not a regular file"
            }
            throw SesameError(.fileUnreadable, "\(kind) '\(path)' is \(what), not a regular file")
        }
        if Int(status.st_size) > kind.sizeLimit { throw tooLarge(path, kind, size: Int(status.st_size)) }
    }

    private static func tooLarge(_ path: String, _ kind: Kind, size: Int?) -> SesameError {
        let size = size.map { "\($0) bytes" } ?? "more than that"
        return SesameError(
            .fileTooLarge,
            "\(kind) '\(path)' holds \(size); a \(kind) may hold \(kind.sizeLimit) bytes at most"
        )
    }

    /// Reads `fd` to its end, refusing to go past the kind's limit. The pieces are sized from the
    /// size `fstat` reported (one byte more, to see the end in the same call), at least 16 KiB for
    /// files that report none (/proc, pipes) and at most 1 MiB: a 2 KiB trust file costs 16 KiB
    /// of memory, not a megabyte.
    private static func readAll(_ fd: Int32, expected: Int, path: String, kind: Kind) throws(SesameError) -> [UInt8] {
        var bytes: [UInt8] = []
        let expected = min(max(expected, 0), kind.sizeLimit)
        bytes.reserveCapacity(expected + 1)
        var piece = [UInt8](repeating: 0, count: min(max(expected + 1, 16 << 10), 1 << 20, kind.sizeLimit + 1))
        while true {
            let count = piece.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if count == 0 { return bytes }
            if count < 0 {
                if errno == EINTR { continue }
                throw SesameError(.fileUnreadable, "\(kind) '\(path)': \(errnoText(errno))")
            }
            guard bytes.count + count <= kind.sizeLimit else { throw tooLarge(path, kind, size: nil) }
            bytes += piece[0..<count]
        }
    }
}
