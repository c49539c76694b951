/// What one party's challenges in a task have seen so far, per protection space: failures (which
/// become `previousFailureCount`), the credential last tried, which spaces already had their one
/// credential found without asking and their one stale-nonce renewal, and how many requests went
/// out again with a credential.
struct ChallengeHistory: Sendable {
    private var failures: [ProtectionSpace: Int] = [:]
    private var lastTried: [ProtectionSpace: Credential] = [:]
    private var automaticTried: Set<ProtectionSpace> = []
    private var staleRenewed: Set<ProtectionSpace> = []
    /// Requests sent again with a credential, across every protection space.
    private(set) var roundTrips = 0

    /// `previousFailureCount` counts per server and realm, across schemes.
    private static func key(_ space: ProtectionSpace) -> ProtectionSpace {
        space.with(realm: space.realm, method: .default)
    }

    func failureCount(_ space: ProtectionSpace) -> Int { failures[Self.key(space)] ?? 0 }
    mutating func failed(_ space: ProtectionSpace) { failures[Self.key(space), default: 0] += 1 }

    func lastTried(_ space: ProtectionSpace) -> Credential? { lastTried[Self.key(space)] }

    /// `credential` goes out for `space`: one more round trip.
    mutating func sending(_ credential: Credential, for space: ProtectionSpace) {
        lastTried[Self.key(space)] = credential
        roundTrips += 1
    }

    /// True the first time only: a credential found without asking is tried once per space.
    /// A multi-leg exchange (Negotiate) sends its next token: a round trip, not a failure.
    mutating func continuing() { roundTrips += 1 }

    mutating func takeAutomaticTry(_ space: ProtectionSpace) -> Bool { automaticTried.insert(Self.key(space)).inserted }

    /// True the first time only: a stale nonce is renewed once per space, as one more round trip.
    mutating func takeStaleRenewal(_ space: ProtectionSpace) -> Bool {
        guard staleRenewed.insert(Self.key(space)).inserted else { return false }
        roundTrips += 1
        return true
    }
}
