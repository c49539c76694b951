import FoundationEssentials
import Glibc

/// The user's home folder: `$HOME` when set, else the password database's entry for the user.
enum UserHome {
    static var path: String {
        if let home = ProcessInfo.processInfo.environment["HOME"], !home.isEmpty { return home }
        var entry = passwd()
        var result: UnsafeMutablePointer<passwd>?
        var buffer = [CChar](repeating: 0, count: 16 * 1024)
        guard getpwuid_r(getuid(), &entry, &buffer, buffer.count, &result) == 0, result != nil,
            let directory = entry.pw_dir
        else { return "/" }
        return String(cString: directory)
    }
}
