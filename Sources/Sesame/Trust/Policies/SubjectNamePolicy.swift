internal import COpenSSL

/// RFC 5280 §4.1.2.6: a CA certificate's subject is a non-empty distinguished name (a leaf's
/// may be empty when its subjectAltName is critical, checked with the SAN).
struct SubjectNamePolicy: CertificatePolicy {
    let source = "RFC 5280 §4.1.2.4, §4.1.2.6"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        guard certificate.depth > 0 else { return [] }
        return X509_NAME_entry_count(X509_get_subject_name(certificate.x509)) == 0
            ? ["a CA certificate has an empty subject"] : []
    }
}
