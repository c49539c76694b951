import FoundationEssentials
import Glibc

/// Successful default evaluations by (host, chain), for one set of trust roots (a TLS context): a
/// new connection to a server already judged does not pay for chain building again. An entry lasts
/// ten minutes at most, and never past the earliest expiry in its chain; failures are not cached.
final class TrustEvaluationCache: Sendable {
    private struct Key: Hashable {
        let host: String
        let chainDigest: [UInt8]
        let policies: CertificatePolicyRequirements
    }

    private struct Entry {
        let result: TrustEvaluationResult
        let expires: Date
    }

    private static let lifetime: TimeInterval = 600
    private static let capacity = 512
    private let entries = LockedValue<[Key: Entry]>([:])

    /// The evaluation of `trust`, from the cache when a fresh trusted one is there.
    func evaluate(_ trust: ServerTrust) -> TrustEvaluationResult {
        guard trust.ocspResponses.isEmpty, trust.revocationLists.isEmpty else { return trust.evaluate() }
        let key = Key(
            host: trust.host.lowercased(),
            chainDigest: sha256Digest(trust.peerChain.flatMap { [UInt8]($0.derEncoded) }),
            policies: trust.certificatePolicies
        )
        let now = Date()
        if let entry = entries.withLock({ $0[key] }), entry.expires > now { return entry.result }
        let result = trust.evaluate()
        guard result.isTrusted else { return result }
        let earliestExpiry = result.verifiedChain.map(\.notValidAfter).min() ?? now
        let entry = Entry(result: result, expires: min(now + Self.lifetime, earliestExpiry))
        entries.withLock { entries in
            if entries.count >= Self.capacity { entries = entries.filter { $0.value.expires > now } }
            if entries.count >= Self.capacity { entries.removeAll() }
            entries[key] = entry
        }
        return result
    }
}
