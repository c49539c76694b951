import FoundationEssentials
import Glibc

/// SPKI SHA-256 pins per host (TrustKit, OkHttp's `CertificatePinner`): the validated chain must
/// contain a public key whose `sha256/BASE64` pin is listed for the host. Pins are checked after
/// standard validation, against the chain OpenSSL built, never against extra certificates the server
/// sent.
///
/// ```swift
/// let pins = try PinSet([
///     .init(host: "api.example", includesSubdomains: true,
///           pins: ["sha256/AAAA...=", "sha256/BBBB...="])  // the second is the backup
/// ]) { report in print(report.json) }
/// ```
public struct PinSet: ServerTrustEvaluating {
    /// The pins of one host pattern.
    public struct Rule: Sendable {
        /// The host the rule is for, lowercased.
        public let host: String
        /// True when the rule also covers every subdomain of ``host``.
        public let includesSubdomains: Bool
        /// `sha256/BASE64` pins (curl's `sha256//BASE64` is accepted too).
        public let pins: Set<String>
        /// After this date the pins are no longer enforced, if ``enforcesAfterExpiration`` is
        /// false; with it true (the default) expiry changes nothing: a forgotten pin set fails
        /// closed.
        public let expiration: Date?
        /// True when the pins stay enforced after ``expiration``.
        public let enforcesAfterExpiration: Bool

        /// A rule pinning `host` (and its subdomains when `includesSubdomains`) to `pins`;
        /// malformed pins are refused by ``PinSet/init(_:now:report:)``.
        public init(
            host: String,
            includesSubdomains: Bool = false,
            pins: Set<String>,
            expiration: Date? = nil,
            enforcesAfterExpiration: Bool = true
        ) {
            self.host = host.lowercased()
            self.includesSubdomains = includesSubdomains
            // Malformed pins are kept as given, for the initializer of PinSet to refuse by name.
            self.pins = Set(pins.map { PublicKey.normalizedPin($0) ?? $0 })
            self.expiration = expiration
            self.enforcesAfterExpiration = enforcesAfterExpiration
        }

        func covers(_ host: String) -> Bool {
            host == self.host || (includesSubdomains && host.hasSuffix("." + self.host))
        }
    }

    /// What a pin failure looked like, for the report handler.
    public struct FailureReport: Sendable, Encodable {
        /// The host whose chain failed.
        public let host: String
        /// The port connected to.
        public let port: Int
        /// When the failure happened.
        public let date: Date
        /// The pins the matching rule lists.
        public let expectedPins: [String]
        /// The pins of the chain as validated (leaf first), or of the chain as sent when it did not
        /// validate.
        public let observedPins: [String]
        /// Why the chain was refused.
        public let reason: String

        /// The report as JSON (ISO 8601 dates, sorted keys).
        public var json: String {
            let encoder = JSONEncoder()
            encoder.dateEncodingStrategy = .iso8601
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return (try? encoder.encode(self)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        }
    }

    /// The rules, as given.
    public let rules: [Rule]
    private let report: (@Sendable (FailureReport) -> Void)?
    private let now: @Sendable () -> Date

    /// - Throws: ``SesameError/Code/invalidArgument`` for a malformed pin, or an enforced rule with
    ///   fewer than two pins (a backup pin is required, or a key rotation locks everyone out).
    public init(
        _ rules: [Rule],
        now: @escaping @Sendable () -> Date = { Date() },
        report: (@Sendable (FailureReport) -> Void)? = nil
    ) throws {
        for rule in rules {
            for pin in rule.pins where PublicKey.normalizedPin(pin) == nil {
                throw SesameError(.invalidArgument, "'\(pin)' is not a sha256/BASE64 SPKI pin")
            }
            guard rule.pins.count >= 2 else {
                throw SesameError(
                    .invalidArgument,
                    "the pins for \(rule.host) need a backup pin (at least two), or a key rotation locks every client out"
                )
            }
        }
        self.rules = rules
        self.report = report
        self.now = now
    }

    /// The rule for `host`: the exact one, else the most specific including its subdomains.
    public func rule(for host: String) -> Rule? {
        let host = host.lowercased()
        return rules.filter { $0.covers(host) }.max { $0.host.count < $1.host.count }
    }

    /// Validates the chain for `host`, then requires one of the pins of the rule covering `host`; a
    /// host no rule covers gets standard validation only.
    public func evaluate(_ trust: ServerTrust, forHost host: String) throws {
        let chain = trust.evaluate(forHost: host)
        guard let rule = rule(for: host) else {
            try chain.requireTrusted(host)
            return
        }
        if let expiration = rule.expiration, now() > expiration, !rule.enforcesAfterExpiration {
            try chain.requireTrusted(host)
            return
        }
        let observed = (chain.isTrusted ? chain.verifiedChain : trust.peerChain).map {
            "sha256/" + $0.publicKey.sha256Pin
        }
        let failure: String?
        if !chain.isTrusted {
            failure = chain.failures.map(\.description).joined(separator: "; ")
        } else if Set(observed).isDisjoint(with: rule.pins) {
            failure = "no public key of the validated chain matches the pins for \(rule.host)"
        } else {
            failure = nil
        }
        guard let failure else { return }
        report?(
            FailureReport(
                host: host,
                port: trust.port,
                date: now(),
                expectedPins: rule.pins.sorted(),
                observedPins: observed,
                reason: failure
            )
        )
        throw Self.rejection(host, [failure])
    }
}
