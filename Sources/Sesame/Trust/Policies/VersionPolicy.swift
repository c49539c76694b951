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

/// RFC 5280 §4.1.2.2: the serial number is a positive integer of at most 20 octets (the
/// Baseline Requirements §7.1: greater than zero, less than 2^159). Trust anchors are exempt:
/// they are trusted as configured (§6.1.1 d).
struct SerialNumberPolicy: CertificatePolicy {
    let source = "RFC 5280 §4.1.2.2; BR §7.1"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        guard !certificate.isAnchor else { return [] }
        guard let serial = X509_get0_serialNumber(certificate.x509) else { return ["the serial number is missing"] }
        if ASN1_STRING_type(serial) == V_ASN1_NEG_INTEGER { return ["the serial number is negative"] }
        guard let bn = ASN1_INTEGER_to_BN(serial, nil) else { return ["the serial number is unreadable"] }
        defer { BN_free(bn) }
        if BN_is_zero(bn) == 1 { return ["the serial number is zero"] }
        // DER content octets: the magnitude, plus a leading zero when its top bit is set.
        let bits = Int(BN_num_bits(bn))
        let octets = bits / 8 + 1
        if octets > 20 { return ["the serial number is \(octets) octets long (20 at most)"] }
        return []
    }
}

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
