internal import COpenSSL

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
