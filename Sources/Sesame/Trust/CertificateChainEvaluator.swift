internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Glibc

/// The result of evaluating a certificate chain.
public struct TrustEvaluationResult: Sendable, CustomStringConvertible {
    /// Every reason the chain failed; empty when trusted.
    public let failures: [TrustFailureReason]
    /// The chain OpenSSL built, leaf first, ending at an anchor when one was found.
    public let verifiedChain: [Certificate]
    /// The chain as the server sent it, leaf first.
    public var observedChain: [Certificate] = []
    /// The leaf's status from a verified OCSP response, when one was evaluated.
    public var ocspStatus: OCSPStatus? = nil
    /// `sha256/BASE64` SPKI pins of the validated chain (of the chain as sent when nothing was
    /// validated), leaf first: what to paste into a ``PinSet``.
    public var pins: [String] {
        (verifiedChain.isEmpty ? observedChain : verifiedChain).map { "sha256/" + $0.publicKey.sha256Pin }
    }
    /// Every path the evaluation built, in order, with its failures (the last one passed when
    /// the chain is trusted); `sesame trust evaluate -v` prints them.
    public var candidatePaths: [CandidatePath] = []
    /// The valid policy set of the validated path (RFC 5280 §6.1.5 (g)), as dotted OIDs, within
    /// the evaluation's ``CertificatePolicyRequirements/acceptablePolicies``:
    /// ``CertificatePolicyRequirements/anyPolicy`` when every CA of the path asserts anyPolicy,
    /// empty when a certificate of the path asserts no policy.
    public var validPolicies: [String] = []
    /// True when there is no failure.
    public var isTrusted: Bool { failures.isEmpty }

    /// True when one of the failures is of this kind.
    public func contains(_ kind: TrustFailureReason.Kind) -> Bool { failures.contains { $0.kind == kind } }

    public var description: String {
        isTrusted
            ? "trusted (\(verifiedChain.count) certificates)"
            : "not trusted: " + failures.map(\.description).joined(separator: "; ")
    }
}

/// A path the evaluation built: leaf first, up to the anchor when one was reached.
public struct CandidatePath: Sendable, CustomStringConvertible {
    /// The chain, leaf first, ending at a trust root.
    public let chain: [Certificate]
    /// Why the chain is not trusted; empty when it is.
    public let failures: [TrustFailureReason]

    public var description: String {
        let path = chain.map { "\($0.subject)" }.joined(separator: " <- ")
        return failures.isEmpty
            ? "\(path): passes" : "\(path): " + failures.map(\.description).joined(separator: "; ")
    }
}

/// Evaluates a certificate chain against anchors, a host name or IP address and a time.
///
/// OpenSSL builds and checks the chain; every error on the way is collected (not just the first),
/// so an expired leaf for the wrong host reports both.
public enum CertificateChainEvaluator {
    /// Evaluates `chain` for TLS server authentication.
    /// - Parameters:
    ///   - chain: the leaf first, then any intermediates (in any order; extras are ignored).
    ///   - roots: the anchors.
    ///   - host: a DNS name or an IP literal (IPv6 with or without brackets) to check; `nil` skips
    ///     the host check.
    ///   - date: the validation time; `nil` is now.
    ///   - maximumDepth: the most intermediates allowed between the leaf and the anchor.
    ///   - crls: revocation lists to check every certificate of the chain against (none: no
    ///     revocation check).
    ///   - ocspResponses: DER OCSP responses about the leaf (none: no OCSP check); see
    ///     ``ServerTrust/ocspResponses``.
    ///   - policies: the certificate-policy inputs of path validation (default: any policy).
    /// - Returns: the result with every failure reason.
    public static func evaluate(
        chain: [Certificate],
        roots: TrustRoots,
        host: String?,
        at date: Date? = nil,
        maximumDepth: Int? = nil,
        crls: [CertificateRevocationList] = [],
        ocspResponses: [Data] = [],
        policies: CertificatePolicyRequirements = CertificatePolicyRequirements()
    ) -> TrustEvaluationResult {
        guard let leaf = chain.first else {
            return TrustEvaluationResult(
                failures: [
                    .init(kind: .malformed, depth: 0, subject: "", openSSLCode: 0, message: "the chain is empty")
                ],
                verifiedChain: []
            )
        }
        // The intermediates, each once (a server may send one twice).
        var intermediates: [Certificate] = []
        for certificate in chain.dropFirst() where !intermediates.contains(certificate) && certificate != leaf {
            intermediates.append(certificate)
        }
        // Path building with backtracking: OpenSSL builds a path (issuers by name, then key
        // identifier, trusted ones first); when that path fails, the search asks again without
        // each intermediate it used, depth first, so that a second issuer (a cross-signed
        // intermediate, an alternate chain) is tried. Bounded: a hostile mesh of certificates costs
        // at most `pathBudget` builds. The failure reported is that of the best path.
        let inputs = PathInputs(
            leaf: leaf,
            chain: chain,
            roots: roots,
            host: host,
            date: date,
            maximumDepth: maximumDepth,
            crls: crls,
            ocspResponses: ocspResponses,
            policies: policies
        )
        var tried: Set<Set<Int>> = []
        var pending: [Set<Int>] = [[]]
        var candidates: [CandidatePath] = []
        var best: TrustEvaluationResult?
        while let excluded = pending.popLast(), candidates.count < pathBudget {
            guard tried.insert(excluded).inserted else { continue }
            let offered = intermediates.indices.filter { !excluded.contains($0) }.map { intermediates[$0] }
            let result = evaluateCandidate(inputs, intermediates: offered)
            candidates.append(CandidatePath(chain: result.verifiedChain, failures: result.failures))
            if result.isTrusted {
                best = result
                break
            }
            if best.map({ score(result) < score($0) }) ?? true { best = result }
            let used = result.verifiedChain.dropFirst().compactMap { intermediates.firstIndex(of: $0) }
            for index in used.reversed() where !excluded.contains(index) { pending.append(excluded.union([index])) }
        }
        // safe: the loop runs at least once (the budget is above zero and `pending` starts non-empty).
        var result = best!
        result.candidatePaths = candidates
        return result
    }

    /// The most paths one evaluation builds.
    static let pathBudget = 16

    /// Lower is better: a path that reached an anchor beats one that did not, then fewer failures.
    private static func score(_ result: TrustEvaluationResult) -> Int {
        (result.contains(.untrustedRoot) ? 1000 : 0) + result.failures.count
    }

    /// One path from `leaf` with `intermediates`. Policies are processed by OpenSSL unless a
    /// certificate offered carries policyConstraints without certificatePolicies
    /// (``ExplicitPolicyCount`` says why): then the path is built without OpenSSL's policy check,
    /// and either counted (it holds such a certificate) or built again from its own certificates
    /// with the policy check (it does not, and none of them leaks).
    private static func evaluateCandidate(_ inputs: PathInputs, intermediates: [Certificate]) -> TrustEvaluationResult {
        func path(_ offered: [Certificate], processesPolicies: Bool) -> TrustEvaluationResult {
            evaluatePath(inputs, intermediates: offered, processesPolicies: processesPolicies)
        }
        guard ([inputs.leaf] + intermediates).contains(where: ExplicitPolicyCount.needsCounting) else {
            return path(intermediates, processesPolicies: true)
        }
        let result = path(intermediates, processesPolicies: false)
        let built = result.verifiedChain
        guard built.count > 1 else { return result }
        if built.dropLast().contains(where: ExplicitPolicyCount.needsCounting) {
            var counted = TrustEvaluationResult(
                failures: result.failures + ExplicitPolicyCount.failures(of: built, requirements: inputs.policies),
                verifiedChain: built
            )
            counted.observedChain = result.observedChain
            counted.ocspStatus = result.ocspStatus
            return counted
        }
        let own = built.dropFirst().dropLast().filter { intermediates.contains($0) }
        return path(Array(own), processesPolicies: true)
    }

    /// What every path of one evaluation is built from and checked against.
    private struct PathInputs {
        let leaf: Certificate
        let chain: [Certificate]
        let roots: TrustRoots
        let host: String?
        let date: Date?
        let maximumDepth: Int?
        let crls: [CertificateRevocationList]
        let ocspResponses: [Data]
        let policies: CertificatePolicyRequirements
    }

    /// One path: OpenSSL's build and checks from the leaf with `intermediates`, then the server profile.
    private static func evaluatePath(
        _ inputs: PathInputs,
        intermediates: [Certificate],
        processesPolicies: Bool
    ) -> TrustEvaluationResult {
        let (leaf, chain, roots, host, date) = (inputs.leaf, inputs.chain, inputs.roots, inputs.host, inputs.date)
        let (maximumDepth, crls, ocspResponses, policies) = (
            inputs.maximumDepth, inputs.crls, inputs.ocspResponses, inputs.policies
        )
        let store: X509StoreBox
        do {
            store = try roots.store()
        } catch {
            return TrustEvaluationResult(
                failures: [
                    .init(kind: .untrustedRoot, depth: 0, subject: "", openSSLCode: 0, message: "\(error)")
                ],
                verifiedChain: []
            )
        }
        guard let context = X509_STORE_CTX_new(), let untrusted = CSesameShims_sk_X509_new_null() else {
            return TrustEvaluationResult(
                failures: [.init(kind: .other, depth: 0, subject: "", openSSLCode: 0, message: "out of memory")],
                verifiedChain: []
            )
        }
        defer {
            X509_STORE_CTX_free(context)
            CSesameShims_sk_X509_free(untrusted)
        }
        for certificate in intermediates { CSesameShims_sk_X509_push(untrusted, certificate.box.pointer) }
        OpenSSLErrorStack.clear()
        guard X509_STORE_CTX_init(context, store.pointer, leaf.box.pointer, untrusted) == 1 else {
            return TrustEvaluationResult(
                failures: [
                    .init(
                        kind: .other,
                        depth: 0,
                        subject: "",
                        openSSLCode: 0,
                        message: "cannot start verification (\(OpenSSLErrorStack.drain()))"
                    )
                ],
                verifiedChain: []
            )
        }
        X509_STORE_CTX_set_purpose(context, X509_PURPOSE_SSL_SERVER)
        let parameters = X509_STORE_CTX_get0_param(context)
        if roots.allowsPartialChains { X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN)) }
        if let date { X509_VERIFY_PARAM_set_time(parameters, time_t(date.timeIntervalSince1970)) }
        if let maximumDepth { X509_VERIFY_PARAM_set_depth(parameters, Int32(clamping: maximumDepth)) }
        // The CRLs apply to this verification only (the store may be shared).
        let crlStack = crls.isEmpty ? nil : CSesameShims_sk_X509_CRL_new_null()
        defer { CSesameShims_sk_X509_CRL_free(crlStack) }
        if let crlStack {
            for crl in crls { CSesameShims_sk_X509_CRL_push(crlStack, crl.box.pointer) }
            X509_STORE_CTX_set0_crls(context, crlStack)
            // RFC 5280 §5 and §6.3 as a whole: CRLs signed by a CRL-signing key of the CA or by
            // another issuer (cRLIssuer), distribution points and reason partitions, and delta CRLs.
            X509_VERIFY_PARAM_set_flags(
                parameters,
                UInt(
                    X509_V_FLAG_CRL_CHECK | X509_V_FLAG_CRL_CHECK_ALL | X509_V_FLAG_EXTENDED_CRL_SUPPORT
                        | X509_V_FLAG_USE_DELTAS
                )
            )
        }
        let invalidPolicies = policies.configure(parameters, processing: processesPolicies)
        guard invalidPolicies.isEmpty else {
            return TrustEvaluationResult(
                failures: [
                    .init(
                        kind: .certificatePolicy,
                        depth: 0,
                        subject: "",
                        openSSLCode: 0,
                        message: "acceptable policies must be dotted object identifiers: "
                            + invalidPolicies.map { "'\($0)'" }.joined(separator: ", ")
                    )
                ],
                verifiedChain: []
            )
        }
        var hostFailure: TrustFailureReason? = nil
        if let host {
            hostFailure = HostCheck.configure(parameters, host: host)
        }

        let collector = FailureCollector(validationTime: time_t(date?.timeIntervalSince1970 ?? Double(time(nil))))
        let unmanaged = Unmanaged.passRetained(collector)
        defer { unmanaged.release() }
        X509_STORE_CTX_set_ex_data(context, FailureCollector.exDataIndex, unmanaged.toOpaque())
        X509_STORE_CTX_set_verify_cb(context) { ok, context in
            guard ok == 0, let context else { return ok }
            // OpenSSL validates a CRL issuer's own path in a context of its own, without the
            // collector, sharing the server's verification parameters.
            guard let raw = X509_STORE_CTX_get_ex_data(context, FailureCollector.exDataIndex) else {
                return FailureCollector.isAcceptableInCRLIssuerPath(context) ? 1 : 0
            }
            let collector = Unmanaged<FailureCollector>.fromOpaque(raw).takeUnretainedValue()
            if collector.isInclusiveNotAfter(context) || FailureCollector.isAnchorWithoutCRL(context) { return 1 }
            collector.record(context)
            return 1  // keep going, so that every failure is reported
        }
        let verified = X509_verify_cert(context)
        var failures = collector.failures
        if let hostFailure { failures.append(hostFailure) }
        if verified != 1 && failures.isEmpty {
            let code = X509_STORE_CTX_get_error(context)
            if code == X509_V_ERR_OUT_OF_MEM, chain.contains(where: \.hasPolicyExtensions) {
                // OpenSSL stops building its policy tree at a fixed number of nodes (CVE-2023-0464).
                failures.append(
                    TrustFailureReason(
                        kind: .certificatePolicy,
                        depth: 0,
                        subject: "\(leaf.subject)",
                        openSSLCode: Int(code),
                        message:
                            "the path's certificate policies and mappings exceed what policy processing is bounded to"
                    )
                )
            } else {
                failures.append(FailureCollector.reason(code: code, depth: 0, subject: "\(leaf.subject)"))
            }
        }
        var built: [Certificate] = []
        if let stack = X509_STORE_CTX_get1_chain(context) { built = Identity.takeStack(stack) }
        _ = OpenSSLErrorStack.drain()
        // OpenSSL's verification passes certificates the web PKI refuses: check the built chain.
        failures += ServerProfile.violations(in: built.isEmpty ? chain : built, host: host)
        if !crls.isEmpty { failures += CRLProfile.violations(crls, path: built.isEmpty ? chain : built) }
        let ocsp = OCSPResponseCheck.evaluate(
            responses: ocspResponses,
            chain: built.isEmpty ? chain : built,
            store: store,
            at: date
        )
        failures += ocsp.failures
        var result = TrustEvaluationResult(failures: failures, verifiedChain: built)
        result.observedChain = chain
        result.ocspStatus = ocsp.status
        if verified == 1, processesPolicies { result.validPolicies = policies.validPolicies(of: context) }
        return result
    }
}

/// Collects verification failures during one `X509_verify_cert`.
final class FailureCollector {
    static let exDataIndex: Int32 = CSesameShims_X509_STORE_CTX_get_ex_new_index()
    private(set) var failures: [TrustFailureReason] = []
    /// The validation time in whole seconds.
    let validationTime: time_t

    init(validationTime: time_t) { self.validationTime = validationTime }

    /// True for OpenSSL's "expired" at the very second of notAfter: RFC 5280 §4.1.2.5 makes the
    /// validity period inclusive at both ends (OpenSSL treats notAfter as exclusive), and a
    /// validation time with a fraction of a second is in its whole second.
    func isInclusiveNotAfter(_ context: OpaquePointer) -> Bool {
        guard X509_STORE_CTX_get_error(context) == X509_V_ERR_CERT_HAS_EXPIRED,
            let certificate = X509_STORE_CTX_get_current_cert(context),
            let notAfter = X509_get0_notAfter(certificate)
        else { return false }
        return ASN1_TIME_cmp_time_t(notAfter, validationTime) == 0
    }

    /// True for "unable to get certificate CRL" about the path's trust anchor: RFC 5280 §6.3
    /// checks the certificates the anchor's key vouches for, not the anchor itself, so an anchor
    /// needs no CRL (a CRL that lists it still revokes it).
    static func isAnchorWithoutCRL(_ context: OpaquePointer) -> Bool {
        guard X509_STORE_CTX_get_error(context) == X509_V_ERR_UNABLE_TO_GET_CRL,
            let chain = X509_STORE_CTX_get0_chain(context)
        else { return false }
        let depth = Int(X509_STORE_CTX_get_error_depth(context))
        return depth > 0 && depth == Int(CSesameShims_sk_X509_num(chain)) - 1
            && X509_STORE_CTX_get_num_untrusted(context) <= Int32(depth)
    }

    /// For the path of a CRL's issuer, which OpenSSL checks with the server's parameters: the
    /// server's name and purpose are not the CRL issuer's to match (a CRL-signing certificate
    /// names no host and need not serve TLS), and the anchor needs no CRL. Any other failure
    /// makes the CRL unusable.
    static func isAcceptableInCRLIssuerPath(_ context: OpaquePointer) -> Bool {
        switch X509_STORE_CTX_get_error(context) {
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH, X509_V_ERR_INVALID_PURPOSE: return true
        default: return isAnchorWithoutCRL(context)
        }
    }

    func record(_ context: OpaquePointer) {
        let code = X509_STORE_CTX_get_error(context)
        let depth = Int(X509_STORE_CTX_get_error_depth(context))
        var subject = ""
        if let certificate = X509_STORE_CTX_get_current_cert(context) {
            subject = DistinguishedName(borrowing: X509_get_subject_name(certificate)).description
        }
        let reason = Self.reason(code: code, depth: depth, subject: subject)
        if !failures.contains(where: { $0.openSSLCode == reason.openSSLCode && $0.depth == depth }) {
            failures.append(reason)
        }
    }

    static func reason(code: Int32, depth: Int, subject: String) -> TrustFailureReason {
        let message = X509_verify_cert_error_string(Int(code)).map { String(cString: $0) } ?? "error \(code)"
        let kind: TrustFailureReason.Kind
        switch code {
        case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CRL_HAS_EXPIRED: kind = .expired
        case X509_V_ERR_CERT_NOT_YET_VALID, X509_V_ERR_CRL_NOT_YET_VALID: kind = .notYetValid
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH, X509_V_ERR_EMAIL_MISMATCH:
            kind = .hostnameMismatch
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN: kind = .selfSigned
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
            X509_V_ERR_CERT_UNTRUSTED, X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE:
            kind = .untrustedRoot
        case X509_V_ERR_INVALID_CA, X509_V_ERR_KEYUSAGE_NO_CERTSIGN: kind = .invalidCertificateAuthority
        case X509_V_ERR_PATH_LENGTH_EXCEEDED: kind = .pathLengthExceeded
        case X509_V_ERR_INVALID_PURPOSE: kind = .invalidPurpose
        case X509_V_ERR_CERT_SIGNATURE_FAILURE, X509_V_ERR_UNABLE_TO_DECRYPT_CERT_SIGNATURE: kind = .badSignature
        case X509_V_ERR_CERT_REVOKED: kind = .revoked
        case X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD, X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD: kind = .malformed
        case X509_V_ERR_NO_EXPLICIT_POLICY, X509_V_ERR_INVALID_POLICY_EXTENSION: kind = .certificatePolicy
        default: kind = .other
        }
        return TrustFailureReason(kind: kind, depth: depth, subject: subject, openSSLCode: Int(code), message: message)
    }
}

/// Host-name and IP-address checks (RFC 6125: no partial wildcards; IPs only against IP SANs).
enum HostCheck {
    /// Sets the host or IP on the verification parameters; returns a failure when the host itself
    /// is unusable.
    static func configure(_ parameters: OpaquePointer?, host rawHost: String) -> TrustFailureReason? {
        if let host = IPAddressText.dnsName(rawHost) {
            X509_VERIFY_PARAM_set_hostflags(parameters, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
            if !host.isEmpty, !host.contains("\0"), X509_VERIFY_PARAM_set1_host(parameters, host, 0) == 1 {
                return nil
            }
        } else if X509_VERIFY_PARAM_set1_ip_asc(parameters, IPAddressText.unbracketed(rawHost)) == 1 {
            return nil
        }
        return TrustFailureReason(
            kind: .hostnameMismatch,
            depth: 0,
            subject: "",
            openSSLCode: 0,
            message: "'\(rawHost)' is not a usable host name or IP address"
        )
    }
}
