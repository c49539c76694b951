import FoundationEssentials
import Glibc

/// RFC 5280 §6.1 for a path whose valid policy tree is empty from some certificate on because that
/// certificate carries policyConstraints but no certificatePolicies (§6.1.3 (e)).
///
/// OpenSSL 3.0 leaks the decoded policyConstraints of exactly such a certificate whenever it
/// processes policies (its policy cache returns early without freeing them), once per
/// certificate object: a server could make every connection leak. So such a path is validated
/// without OpenSSL's policy check, and its policy outcome computed here. With the tree empty, the
/// outcome is the explicit_policy count alone (§6.1.2 (d), §6.1.4 (h), (i), §6.1.5 (a), (b),
/// (g)): it never grows, so the path is valid exactly when it is still above zero at the end.
/// The mappings' own rule (never from or to anyPolicy, §6.1.4 (a)) is checked too.
enum ExplicitPolicyCount {
    /// Whether `certificate` makes OpenSSL's policy processing leak.
    static func needsCounting(_ certificate: Certificate) -> Bool { certificate.hasPolicyConstraintsWithoutPolicies }

    /// The policy failures of `path` (leaf first, ending at the anchor, which is not counted).
    static func failures(of path: [Certificate], requirements: CertificatePolicyRequirements) -> [TrustFailureReason] {
        let certificates = Array(path.dropLast().reversed())  // from the one the anchor issued to the leaf
        let n = certificates.count
        var failures: [TrustFailureReason] = []
        for (index, certificate) in certificates.enumerated() {
            let mappings = CertificateExtensions.policyMappings(certificate.box.pointer).value ?? []
            if mappings.contains(where: {
                $0.issuer == CertificateExtensions.anyPolicy || $0.subject == CertificateExtensions.anyPolicy
            }) {
                failures.append(reason(depth: n - 1 - index, certificate, "maps a policy from or to anyPolicy"))
            }
        }
        var explicitPolicy = requirements.requiresExplicitPolicy ? 0 : n + 1
        for (index, certificate) in certificates.enumerated() {
            let require = requireExplicitPolicy(certificate)
            if index < n - 1 {
                if !certificate.isSelfIssued, explicitPolicy != 0 { explicitPolicy -= 1 }
                if let require, require < explicitPolicy { explicitPolicy = require }
            } else {
                if explicitPolicy != 0 { explicitPolicy -= 1 }
                if require == 0 { explicitPolicy = 0 }
            }
        }
        if explicitPolicy == 0, let leaf = path.first {
            failures.append(
                reason(
                    depth: 0,
                    leaf,
                    "an explicit policy is required and a certificate of the path asserts no policy"
                )
            )
        }
        return failures
    }

    private static func requireExplicitPolicy(_ certificate: Certificate) -> Int? {
        // Criticality does not change the count (§6.1.4 (i) reads the field either way).
        CertificateExtensions.policyConstraints(certificate.box.pointer, critical: false).value?.requireExplicit ?? nil
    }

    private static func reason(depth: Int, _ certificate: Certificate, _ message: String) -> TrustFailureReason {
        TrustFailureReason(
            kind: .certificatePolicy,
            depth: depth,
            subject: "\(certificate.subject)",
            openSSLCode: 0,
            message: message
        )
    }
}
