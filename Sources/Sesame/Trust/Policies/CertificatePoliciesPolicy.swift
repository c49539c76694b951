internal import COpenSSL

/// The policy extensions' own form; the policies themselves are processed along the path by
/// OpenSSL's policy tree with the caller's ``CertificatePolicyRequirements`` (RFC 5280 §6.1):
/// - certificatePolicies decodes and names each policy once (RFC 5280 §4.2.1.4: "A certificate
///   policy OID MUST NOT appear more than once"; Chromium's verifier refuses such a certificate
///   too);
/// - a critical certificatePolicies carries only the qualifiers RFC 5280 defines (CPS pointer,
///   user notice): RFC 5280 §4.2 requires refusing a critical extension "that contains
///   information that it cannot process", and a qualifier of another kind is such information;
/// - policyConstraints and inhibitAnyPolicy decode, in CA certificates, and policyConstraints is
///   not an empty sequence (§4.2.1.11, §4.2.1.14).
/// That policyConstraints and inhibitAnyPolicy are marked critical binds the CA (§4.2.1.11,
/// §4.2.1.14); path validation (§6.1) processes them either way, as Chromium and OpenSSL do, so a
/// non-critical one is not refused.
struct CertificatePoliciesPolicy: CertificatePolicy {
    let source = "RFC 5280 §4.2, §4.2.1.4, §4.2.1.11, §4.2.1.14"

    /// The qualifiers RFC 5280 §4.2.1.4 defines: id-qt-cps and id-qt-unotice.
    static let knownQualifiers: Set<String> = ["1.3.6.1.5.5.7.2.1", "1.3.6.1.5.5.7.2.2"]

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        var problems: [String] = []
        switch certificate.certificatePolicies {
        case .absent: break
        case .malformed: problems.append("certificatePolicies is malformed")
        case .present(let policies, let critical):
            if policies.isEmpty { problems.append("certificatePolicies is empty") }
            if Set(policies.map(\.policy)).count != policies.count {
                problems.append("certificatePolicies names a policy more than once")
            }
            if critical,
                let unknown = policies.flatMap(\.qualifiers).first(where: { !Self.knownQualifiers.contains($0) })
            {
                problems.append(
                    "a critical certificatePolicies carries a qualifier (\(unknown)) that cannot be processed"
                )
            }
        }
        switch CertificateExtensions.policyConstraints(certificate.x509, critical: false) {
        case .absent: break
        case .malformed: problems.append("policyConstraints is malformed")
        case .present(let value, _):
            if !certificate.isCA { problems.append("policyConstraints in a certificate that is not a CA") }
            if value.requireExplicit == nil && value.inhibitMapping == nil {
                problems.append("policyConstraints is an empty sequence")
            }
        }
        switch CertificateExtensions.inhibitAnyPolicy(certificate.x509, critical: false) {
        case .absent: break
        case .malformed: problems.append("inhibitAnyPolicy is malformed")
        case .present:
            if !certificate.isCA { problems.append("inhibitAnyPolicy in a certificate that is not a CA") }
        }
        return problems
    }
}
