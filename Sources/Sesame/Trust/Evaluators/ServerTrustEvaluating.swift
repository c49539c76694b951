import FoundationEssentials
import Glibc

/// Judges a server's certificate chain for a host (Alamofire's `ServerTrustEvaluating`): returns
/// when the server is trusted, throws ``SesameError/Code/serverTrustRejected`` naming every reason
/// when it is not.
public protocol ServerTrustEvaluating: Sendable {
    /// Returns when `trust` is trusted for `host`; throws ``SesameError/Code/serverTrustRejected``
    /// naming every reason when it is not.
    func evaluate(_ trust: ServerTrust, forHost host: String) throws
}

extension ServerTrustEvaluating {
    /// The refusal error with `reasons`.
    static func rejection(_ host: String, _ reasons: [String]) -> SesameError {
        SesameError(.serverTrustRejected, "\(host): " + reasons.joined(separator: "; "))
    }
}

extension TrustEvaluationResult {
    /// Throws the chain's failures, if any.
    func requireTrusted(_ host: String) throws {
        guard isTrusted else {
            throw SesameError(.serverTrustRejected, "\(host): " + failures.map(\.description).joined(separator: "; "))
        }
    }
}

extension ServerTrust {
    /// The chain as validated for `host` under ``trustRoots`` (names checked when `checkingHost`),
    /// or the refusal with every reason.
    func validatedChain(forHost host: String, checkingHost: Bool) throws -> [Certificate] {
        let result = evaluate(forHost: checkingHost ? host : nil)
        try result.requireTrusted(host)
        return result.verifiedChain
    }

    /// Evaluation with this trust's roots, validation date (unless `date` is given), revocation
    /// lists (plus `extraCRLs`), OCSP responses and certificate policies, for `host` (nil: no
    /// name check).
    func evaluate(
        forHost host: String?,
        at date: Date? = nil,
        extraCRLs: [CertificateRevocationList] = []
    ) -> TrustEvaluationResult {
        CertificateChainEvaluator.evaluate(
            chain: peerChain,
            roots: trustRoots,
            host: host,
            at: date ?? validationDate,
            crls: revocationLists + extraCRLs,
            ocspResponses: ocspResponses,
            policies: certificatePolicies
        )
    }
}

/// Standard evaluation: the chain against the trust roots, and the host's name (unless turned off).
public struct DefaultTrustEvaluator: ServerTrustEvaluating {
    /// True when the certificate must name the host.
    public let validatesHost: Bool

    /// Standard evaluation, naming the host unless `validatesHost` is false.
    public init(validatesHost: Bool = true) { self.validatesHost = validatesHost }

    /// Validates the chain against the trust roots, and the host's name when ``validatesHost`` is
    /// true.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        try trust.evaluate(forHost: validatesHost ? host : nil).requireTrusted(host)
    }
}

/// The chain must include one of these certificates (by default on top of standard validation; or,
/// with `performsDefaultValidation` off, with them as the only anchors).
public struct PinnedCertificatesTrustEvaluator: ServerTrustEvaluating {
    /// The pinned certificates.
    public let certificates: Set<Certificate>
    /// True when the chain must also validate under the configured trust roots.
    public let performsDefaultValidation: Bool
    /// True when the certificate must name the host.
    public let validatesHost: Bool

    /// Pins to `certificates`, on top of standard validation unless `performsDefaultValidation` is
    /// false.
    public init(certificates: Set<Certificate>, performsDefaultValidation: Bool = true, validatesHost: Bool = true) {
        self.certificates = certificates
        self.performsDefaultValidation = performsDefaultValidation
        self.validatesHost = validatesHost
    }

    /// Requires standard validation (when ``performsDefaultValidation``) and a pinned certificate
    /// in the chain.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        var policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: certificates)
        policy.validatesDomainName = validatesHost
        if performsDefaultValidation {
            // Valid under the configured roots first, then pinned.
            try DefaultTrustEvaluator(validatesHost: validatesHost).evaluate(trust, forHost: host)
        }
        let evaluation = policy.evaluation(of: trust, forDomain: host)
        guard evaluation.isTrusted else { throw Self.rejection(host, [evaluation.description]) }
    }
}

/// A public key of the validated chain must be one of these.
public struct PublicKeysTrustEvaluator: ServerTrustEvaluating {
    /// The pinned public keys.
    public let keys: Set<PublicKey>
    /// True when the certificate must name the host.
    public let validatesHost: Bool

    /// Pins to `keys`, on top of standard validation.
    public init(keys: Set<PublicKey>, validatesHost: Bool = true) {
        self.keys = keys
        self.validatesHost = validatesHost
    }

    /// Requires standard validation and a pinned key in the validated chain.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        let chain = try trust.validatedChain(forHost: host, checkingHost: validatesHost)
        guard chain.contains(where: { keys.contains($0.publicKey) }) else {
            throw Self.rejection(host, ["no pinned public key in the validated chain"])
        }
    }
}

/// Every evaluator must pass.
public struct CompositeTrustEvaluator: ServerTrustEvaluating {
    /// The evaluators, in the order they run.
    public let evaluators: [any ServerTrustEvaluating]

    /// Requires every one of `evaluators`, in order; the first refusal is thrown.
    public init(_ evaluators: [any ServerTrustEvaluating]) { self.evaluators = evaluators }

    /// Runs every evaluator; throws the first refusal.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        for evaluator in evaluators { try evaluator.evaluate(trust, forHost: host) }
    }
}

/// Accepts every server, with no check at all. For tests against throwaway servers only: anyone
/// on the path can read and change such a connection.
public struct InsecureDisabledTrustEvaluator: ServerTrustEvaluating {
    /// The evaluator that accepts every server.
    public init() {}
    /// Returns without checking anything.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {}
}

extension SecurityPolicy: ServerTrustEvaluating {
    /// Evaluates `trust` under the policy's pinning mode for `host`; throws its refusal.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        let evaluation = evaluation(of: trust, forDomain: host)
        guard evaluation.isTrusted else { throw Self.rejection(host, [evaluation.description]) }
    }
}

/// Standard evaluation plus revocation: every certificate of the chain is checked against the
/// caller's CRLs (nothing is fetched from the network).
public struct RevocationTrustEvaluator: ServerTrustEvaluating {
    /// The revocation lists checked, on top of those the trust already carries.
    public let crls: [CertificateRevocationList]
    /// True when the certificate must name the host.
    public let validatesHost: Bool

    /// Standard evaluation with `crls` as well.
    public init(crls: [CertificateRevocationList], validatesHost: Bool = true) {
        self.crls = crls
        self.validatesHost = validatesHost
    }

    /// Validates the chain with the lists; a revoked certificate anywhere in it refuses the server.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        try trust.evaluate(forHost: validatesHost ? host : nil, extraCRLs: crls).requireTrusted(host)
    }
}

/// SPKI SHA-256 pins for every host, any one of which must be in the validated chain (curl's
/// `--pinnedpubkey`, which takes a single pin). Apps should prefer ``PinSet``, which requires a
/// backup pin.
public struct PublicKeyPinsTrustEvaluator: ServerTrustEvaluating {
    /// The pins, normalized to `sha256/BASE64`.
    public let pins: Set<String>
    /// True when the certificate must name the host.
    public let validatesHost: Bool

    /// - Throws: ``SesameError/Code/invalidArgument`` for a pin that is not `sha256/BASE64` (or curl's
    ///   `sha256//BASE64`) of 32 bytes.
    public init(pins: Set<String>, validatesHost: Bool = true) throws {
        var normalized = Set<String>()
        for pin in pins {
            guard let text = PublicKey.normalizedPin(pin) else {
                throw SesameError(.invalidArgument, "'\(pin)' is not a sha256//BASE64 public-key pin")
            }
            normalized.insert(text)
        }
        self.pins = normalized
        self.validatesHost = validatesHost
    }

    /// Requires standard validation and a pinned key in the validated chain.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        let chain = try trust.validatedChain(forHost: host, checkingHost: validatesHost)
        guard chain.contains(where: { pins.contains("sha256/" + $0.publicKey.sha256Pin) }) else {
            throw Self.rejection(host, ["no public key of the validated chain matches the pinned public keys"])
        }
    }
}
