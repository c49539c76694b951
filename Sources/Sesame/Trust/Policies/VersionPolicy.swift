internal import COpenSSL
internal import CSesameShims

/// RFC 5280 §4.1.2.1: a certificate with extensions is version 3. §4.1.2.8: unique identifiers
/// only in version 2 or 3; the Baseline Requirements (§7.1.2.1 to §7.1.2.7, issuerUniqueID and
/// subjectUniqueID "MUST NOT be present") forbid them altogether.
struct VersionPolicy: CertificatePolicy {
    let source = "RFC 5280 §4.1.2.1, §4.1.2.8; BR §7.1.2"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        var problems: [String] = []
        let version = X509_get_version(certificate.x509)
        if X509_get_ext_count(certificate.x509) > 0, version != 2 {
            problems.append("a certificate with extensions is version \(version + 1), not 3")
        }
        if CSesameShims_unique_ids(certificate.x509) != 0 {
            problems.append("the certificate carries a unique identifier (forbidden by the Baseline Requirements)")
        }
        return problems
    }
}
