import FoundationEssentials
import Glibc

/// AFNetworking's `AFSecurityPolicy`, made safe: validate the server's chain (against the
/// configured roots, or the pinned certificates as anchors in certificate mode), check the domain,
/// and require a pinned certificate or public key in the **validated** chain, so a pinned
/// certificate appended to an unrelated chain never passes (OkHttp CVE-2016-2402).
///
/// ```swift
/// let policy = SecurityPolicy(pinningMode: .publicKey,
///                             pinnedCertificates: try SecurityPolicy.certificates(inDirectory: pins))
/// policy.evaluate(trust, forDomain: "api.example")
/// ```
public struct SecurityPolicy: Sendable {
    /// What is compared with the pinned certificates.
    public enum PinningMode: Sendable, Hashable {
        /// No pinning: standard validation only.
        case none
        /// A certificate of the validated chain must be one of the pinned certificates.
        case certificate
        /// A public key of the validated chain must be one of the pinned certificates' keys.
        case publicKey
    }

    /// What the policy pins to.
    public let pinningMode: PinningMode
    /// The certificates (or, in public-key mode, their keys) the server must present.
    public var pinnedCertificates: Set<Certificate>
    /// Accept chains that do not validate (expired, self-signed, unknown root). Certificate pins
    /// still have to form a valid chain (they become the anchors); public-key pins are then only
    /// compared with the server's own (leaf) key, the one the handshake proved it holds.
    public var allowInvalidCertificates = false
    /// Check the certificate's names against the domain (default on).
    public var validatesDomainName = true

    /// No pinning, valid chains and matching names only.
    public static var `default`: SecurityPolicy { SecurityPolicy(pinningMode: .none) }

    /// A policy pinning in `pinningMode` to `pinnedCertificates`.
    public init(pinningMode: PinningMode, pinnedCertificates: Set<Certificate> = []) {
        self.pinningMode = pinningMode
        self.pinnedCertificates = pinnedCertificates
    }

    /// The certificates in `directory` (`.cer`, `.der`, `.crt`, `.pem`; DER or PEM), like
    /// AFNetworking's `certificatesInBundle:`.
    /// - Throws: when the directory cannot be read or a certificate file does not parse (naming it).
    public static func certificates(inDirectory directory: URL) throws -> Set<Certificate> {
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            throw SesameError(.fileUnreadable, "'\(directory.path)': not a readable directory")
        }
        var result = Set<Certificate>()
        for name in names.sorted()
        where ["cer", "der", "crt", "pem"].contains(PathText.pathExtension(name).lowercased()) {
            result.formUnion(try Certificate.load(contentsOf: directory.appendingPathComponent(name).path))
        }
        return result
    }

    /// The decision and every reason behind a refusal.
    public struct Evaluation: Sendable, CustomStringConvertible {
        /// True when the server is trusted.
        public let isTrusted: Bool
        /// The chain evaluation underneath (with its failures).
        public let chain: TrustEvaluationResult
        /// Why the policy refused, beyond the chain's own failures.
        public let reasons: [String]

        public var description: String {
            isTrusted
                ? "trusted by the security policy"
                : "refused: " + (reasons + chain.failures.map(\.description)).joined(separator: "; ")
        }
    }

    /// True when `trust` passes the policy for `domain` (AFNetworking's `evaluateServerTrust:forDomain:`).
    public func evaluate(_ trust: ServerTrust, forDomain domain: String?) -> Bool {
        evaluation(of: trust, forDomain: domain).isTrusted
    }

    /// The full evaluation, with reasons.
    public func evaluation(of trust: ServerTrust, forDomain domain: String?, at date: Date? = nil) -> Evaluation {
        let host = validatesDomainName ? (domain ?? trust.host) : nil
        if domain != nil, allowInvalidCertificates, validatesDomainName,
            pinningMode == .none || pinnedCertificates.isEmpty
        {
            // As AFNetworking: a self-signed server's name can only be trusted through pins.
            return Evaluation(
                isTrusted: false,
                chain: TrustEvaluationResult(failures: [], verifiedChain: []),
                reasons: ["allowing invalid certificates while validating the domain needs pinned certificates"]
            )
        }
        let roots: TrustRoots = pinningMode == .certificate ? .anchors(Array(pinnedCertificates)) : trust.trustRoots
        let chain = trust.settingRoots(roots).evaluate(forHost: host, at: date)
        let chainAcceptable = chain.isTrusted || (allowInvalidCertificates && pinningMode != .certificate)
        guard chainAcceptable else { return Evaluation(isTrusted: false, chain: chain, reasons: []) }
        switch pinningMode {
        case .none:
            return Evaluation(isTrusted: true, chain: chain, reasons: [])
        case .certificate:
            // The validated chain ends at a pinned anchor, or passes through a pinned certificate.
            let matched = chain.verifiedChain.contains { pinnedCertificates.contains($0) }
            return Evaluation(
                isTrusted: matched,
                chain: chain,
                reasons: matched ? [] : ["no pinned certificate in the validated chain"]
            )
        case .publicKey:
            let pinnedKeys = Set(pinnedCertificates.map(\.publicKey))
            let candidates = chain.isTrusted ? chain.verifiedChain : Array(trust.peerChain.prefix(1))
            let matched = candidates.contains { pinnedKeys.contains($0.publicKey) }
            return Evaluation(
                isTrusted: matched,
                chain: chain,
                reasons: matched
                    ? []
                    : ["no pinned public key in the \(chain.isTrusted ? "validated chain" : "server's certificate")"]
            )
        }
    }
}
