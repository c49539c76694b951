internal import COpenSSL
internal import CSesameShims

/// RFC 5280 §4.1.2.5: validity dates through 2049 are UTCTime, from 2050 GeneralizedTime.
/// (That validity is inclusive at both ends is checked with the time itself.) Trust anchors are
/// exempt (§6.1.1 d).
struct ValidityEncodingPolicy: CertificatePolicy {
    let source = "RFC 5280 §4.1.2.5"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        guard !certificate.isAnchor else { return [] }
        var problems: [String] = []
        for (label, time) in [
            ("notBefore", X509_get0_notBefore(certificate.x509)), ("notAfter", X509_get0_notAfter(certificate.x509)),
        ] {
            guard let time else {
                problems.append("the \(label) time is missing")
                continue
            }
            // UTCTime holds years up to 2049 only: nothing to check.
            if ASN1_STRING_type(time) == V_ASN1_UTCTIME { continue }
            var generalized: Int32 = 0
            let year = CSesameShims_time_year(time, &generalized)
            if year < 0 {
                problems.append("the \(label) time cannot be read")
            } else if year < 2050 && generalized != 0 {
                problems.append("the \(label) time (\(year)) is GeneralizedTime; dates before 2050 are UTCTime")
            }
        }
        return problems
    }
}
