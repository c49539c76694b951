import FoundationEssentials
import Glibc

/// Protection spaces that already accepted a credential in this session, by origin and path, so
/// later requests send it before being challenged (one round trip instead of two).
///
/// Scope follows RFC 7617 section 2.2: a space covers the directory of the URL that was
/// challenged and everything below it. Credentials with `.none` persistence are never kept here.
final class PreemptiveAuthentication: Sendable {
    private struct Entry {
        let origin: Origin
        let directory: String
        let attempt: ChallengeResolver.Attempt
    }

    private let entries = LockedValue<[Entry]>([])

    /// The attempt to send with a request to `url` (whose origin the caller may already know):
    /// the most specific matching entry.
    func attempt(for url: URL, origin known: Origin? = nil) -> ChallengeResolver.Attempt? {
        let entries = entries.withLock { $0 }
        guard !entries.isEmpty, let origin = known ?? Origin(url) else { return nil }
        let path = url.path(percentEncoded: true)
        var best: Entry?
        for entry in entries where entry.origin == origin && path.hasPrefix(entry.directory) {
            if entry.directory.count > best?.directory.count ?? -1 { best = entry }
        }
        return best?.attempt
    }

    /// `attempt` succeeded for a request to `url`.
    func record(_ attempt: ChallengeResolver.Attempt, for url: URL) {
        guard attempt.credential.persistence != .none, let origin = Origin(url) else { return }
        let directory = Self.directory(of: url)
        entries.withLock { entries in
            entries.removeAll { $0.origin == origin && $0.directory == directory }
            entries.append(Entry(origin: origin, directory: directory, attempt: attempt))
        }
    }

    /// The space rejected what was sent: stop sending it preemptively.
    func forget(_ space: ProtectionSpace) {
        entries.withLock { entries in entries.removeAll { $0.attempt.space == space } }
    }

    private static func directory(of url: URL) -> String {
        let path = url.path(percentEncoded: true)
        guard let slash = path.lastIndex(of: "/") else { return "/" }
        return String(path[...slash])
    }
}
