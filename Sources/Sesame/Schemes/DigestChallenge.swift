/// The parameters of a `Digest` challenge (RFC 7616 section 3.3).
public struct DigestChallenge: Sendable, Hashable {
    /// The `realm` parameter.
    public let realm: String
    /// The `nonce` parameter; replaced when the server sends a new one in `Authentication-Info`.
    public private(set) var nonce: String
    /// The `opaque` parameter, returned unchanged in the answer; nil when absent.
    public let opaque: String?
    /// nil when the challenge names an algorithm Sesame does not implement.
    public let algorithm: DigestAlgorithm?
    /// The `algorithm` value as sent (nil when absent, which means MD5).
    public let algorithmName: String?
    /// The qop values offered (`auth`, `auth-int`); empty for an RFC 2069 challenge.
    public let qopOptions: [String]
    /// True when `userhash=true` was given: the answer sends a hash of the user name instead of the
    /// name.
    public let userhash: Bool
    /// True when `charset=UTF-8` was given.
    public let utf8: Bool
    /// True when `stale=true` was given: the last answer's nonce had expired and the same
    /// credential may be sent again without counting as a failure.
    public let stale: Bool
    /// The `domain` URIs, if given.
    public let domain: [String]

    /// The Digest parameters of `challenge`; nil when it is not a usable Digest challenge (not
    /// Digest, or no realm or nonce).
    public init?(_ challenge: HTTPAuthChallenge) {
        guard challenge.method == .httpDigest, let realm = challenge.realm, let nonce = challenge.parameter("nonce")
        else { return nil }
        self.realm = realm
        self.nonce = nonce
        opaque = challenge.parameter("opaque")
        algorithmName = challenge.parameter("algorithm")
        algorithm = DigestAlgorithm(algorithmName ?? "MD5")
        qopOptions =
            challenge.parameter("qop")?.split(separator: ",").map {
                $0.trimmingWhitespace().lowercased()
            }
            .filter { !$0.isEmpty } ?? []
        userhash = challenge.parameter("userhash")?.lowercased() == "true"
        utf8 = challenge.parameter("charset")?.lowercased() == "utf-8"
        stale = challenge.parameter("stale")?.lowercased() == "true"
        domain = challenge.parameter("domain")?.split(separator: " ").map(String.init) ?? []
    }

    /// The same challenge with another nonce (`nextnonce`).
    func replacingNonce(_ nonce: String) -> DigestChallenge {
        var copy = self
        copy.nonce = nonce
        return copy
    }

    /// True when Sesame can answer it: a known algorithm, and a qop it implements (or none).
    public var isAnswerable: Bool {
        algorithm != nil && (qopOptions.isEmpty || qopOptions.contains("auth") || qopOptions.contains("auth-int"))
    }
}
