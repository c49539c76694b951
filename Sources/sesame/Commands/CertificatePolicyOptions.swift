import Sesame

/// `--policy OID` (repeatable), `--explicit-policy`, `--inhibit-policy-mapping` and
/// `--inhibit-any-policy`: the certificate-policy inputs of RFC 5280 §6.1.1, for `sesame trust`
/// and fetches (the meanings of `openssl verify`'s `-policy`, `-explicit_policy`, `-inhibit_map`
/// and `-inhibit_any`).
enum CertificatePolicyOptions {
    static let valued: Set<String> = ["--policy"]
    static let switches: Set<String> = ["--explicit-policy", "--inhibit-policy-mapping", "--inhibit-any-policy"]

    /// The requirements the options describe; the defaults when none is given.
    static func requirements(policies: [String], switches: Set<String>) throws -> CertificatePolicyRequirements {
        var requirements = CertificatePolicyRequirements()
        if !policies.isEmpty {
            for policy in policies where !CertificatePolicyRequirements.isObjectIdentifier(policy) {
                throw Arguments.UsageError(
                    description: "--policy needs a dotted object identifier such as 2.23.140.1.2.1, not '\(policy)'"
                )
            }
            requirements.acceptablePolicies = Set(policies)
        }
        requirements.requiresExplicitPolicy = switches.contains("--explicit-policy")
        requirements.inhibitsPolicyMapping = switches.contains("--inhibit-policy-mapping")
        requirements.inhibitsAnyPolicy = switches.contains("--inhibit-any-policy")
        return requirements
    }
}
