import FoundationEssentials
import Glibc

/// Durable replacement, private folders and locks with plain system calls: every error keeps its
/// errno. (Reading is ``UserFile``'s.)
package enum PosixFile {
    /// Replaces `path` with `bytes` atomically and durably: a temporary file beside it (mode
    /// `mode`), written and fsynced, renamed over the old one, then the directory fsynced. A crash
    /// at any point leaves either the old file or the new one.
    package static func replace(_ path: String, with bytes: [UInt8], mode: mode_t) throws(PosixFileError) {
        let parent = PathText.deletingLastComponent(path)
        let directory = parent.isEmpty ? "." : parent  // a bare file name is in the current directory
        let name = PathText.lastComponent(path)
        let temporary = "\(directory)/.\(name).tmp-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        guard fd >= 0 else { throw PosixFileError(operation: "create", path: temporary, code: errno) }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                write(fd, buffer.baseAddress.map { $0 + written }, bytes.count - written)
            }
            if count < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(fd)
                unlink(temporary)
                throw PosixFileError(operation: "write", path: temporary, code: code)
            }
            written += count
        }
        guard fchmod(fd, mode) == 0, fsync(fd) == 0 else {
            let code = errno
            close(fd)
            unlink(temporary)
            throw PosixFileError(operation: "fsync", path: temporary, code: code)
        }
        close(fd)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw PosixFileError(operation: "rename", path: path, code: code)
        }
        let directoryFD = open(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    /// Refuses a folder for private files (credentials) that someone else could change: one
    /// writable by its group or by others (they could replace or plant the files in it), or owned
    /// by another user than this process's or root. A folder that does not exist passes.
    package static func requirePrivateFolder(_ path: String) throws(PosixFileError) {
        let folder = path.isEmpty ? "." : path
        var status = stat()
        guard stat(folder, &status) == 0 else {
            if errno == ENOENT { return }
            throw PosixFileError(operation: "check folder", path: folder, code: errno)
        }
        if status.st_mode & (S_IWGRP | S_IWOTH) != 0 {
            let mode = String(status.st_mode & 0o7777, radix: 8)
            throw PosixFileError(
                operation: "check folder",
                path: folder,
                reason:
                    "it is writable by \(status.st_mode & S_IWOTH != 0 ? "every user" : "its group") (mode \(mode)), so others could replace the credentials in it; use a folder only its owner can write (chmod go-w)"
            )
        }
        if status.st_uid != geteuid() && status.st_uid != 0 {
            throw PosixFileError(
                operation: "check folder",
                path: folder,
                reason: "it belongs to another user (uid \(status.st_uid)), who could replace the credentials in it"
            )
        }
    }

    /// Creates `path` and its missing parents with `mode` (existing directories are left alone).
    package static func makeDirectories(_ path: String, mode: mode_t) throws(PosixFileError) {
        var built = path.hasPrefix("/") ? "" : "."
        for component in path.split(separator: "/") {
            built += "/" + component
            if mkdir(built, mode) != 0, errno != EEXIST {
                throw PosixFileError(operation: "mkdir", path: built, code: errno)
            }
        }
    }
}

/// A failed system call on a file, or a file refused for what it is.
package struct PosixFileError: Error {
    let operation: String
    let path: String
    let reason: String

    init(operation: String, path: String, code: Int32) {
        self.init(operation: operation, path: path, reason: errnoText(code))
    }

    init(operation: String, path: String, reason: String) {
        self.operation = operation
        self.path = path
        self.reason = reason
    }

    package var description: String { "\(operation) '\(path)': \(reason)" }
}

/// An exclusive advisory lock (`flock`) on a lock file, held until ``unlock()``. Several processes
/// (and several threads, each with its own descriptor) take turns.
package struct FileLock: ~Copyable {
    private let fd: Int32

    /// Opens (creating it when missing) and locks `path`. A symbolic link there is refused, not
    /// followed: whoever could plant it would otherwise choose what file Sesame creates; so is
    /// anything but a regular file.
    package init(path: String) throws(PosixFileError) {
        let fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            let code = errno
            if code == ELOOP {
                throw PosixFileError(
                    operation: "open lock file",
                    path: path,
                    reason: "it is a symbolic link (not followed)"
                )
            }
            throw PosixFileError(operation: "open lock file", path: path, code: code)
        }
        var status = stat()
        guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
            close(fd)
            throw PosixFileError(operation: "open lock file", path: path, reason: "it is not a regular file")
        }
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else {
                let code = errno
                close(fd)
                throw PosixFileError(operation: "lock", path: path, code: code)
            }
        }
        self.fd = fd
    }

    package consuming func unlock() {
        flock(fd, LOCK_UN)
        close(fd)
        discard self
    }

    deinit {
        flock(fd, LOCK_UN)
        close(fd)
    }
}
