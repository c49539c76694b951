internal import COpenSSL
internal import CSesameShims

/// RFC 5280 §4.2.1.1 and §4.2.1.2: the authority key identifier is present in every certificate
/// but a self-signed one, is never critical, and in a root names the root itself: its key
/// identifier equals the subject key identifier, and an issuer and serial, when present, are the
/// root's own (the Baseline Requirements §7.1.2.1.3 forbid them in roots issued under BR 2.0;
/// older roots in use carry them, naming themselves);
/// the subject key identifier is present in every intermediate CA certificate (cA=TRUE) and
/// never critical. Trust anchors are exempt from the presence rule: they are trusted as
/// configured (§6.1.1 d), and roots in every store (Hongkong Post Root CA 1, TWCA Global Root CA)
/// have no subject key identifier.
struct KeyIdentifierPolicy: CertificatePolicy {
    let source = "RFC 5280 §4.2.1.1, §4.2.1.2; BR §7.1.2.1.3"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        let x509 = certificate.x509
        var problems: [String] = []
        let aki = certificate.extension(NID_authority_key_identifier)
        if aki.critical { problems.append("the authority key identifier is marked critical") }
        var hasKeyID: Int32 = 0
        var hasIssuer: Int32 = 0
        var hasSerial: Int32 = 0
        switch CSesameShims_authority_key_id(x509, &hasKeyID, &hasIssuer, &hasSerial) {
        case -1:
            if !certificate.certificate.isSelfIssued { problems.append("the authority key identifier is missing") }
        case 0:
            problems.append("the authority key identifier is malformed")
        default:
            // Only the root: a self-issued intermediate (key rollover) names another key.
            if certificate.certificate.isSelfIssued && (certificate.isAnchor || certificate.path.count == 1) {
                // RFC 5280: the issuer and serial, when given, identify the issuing certificate,
                // which for a root is itself. (BR 2.0 forbids them in new roots; roots in every
                // store, such as QuoVadis Root CA 2, carry them naming themselves.)
                if hasIssuer != 0 || hasSerial != 0, CSesameShims_authority_key_id_names_self(x509) != 1 {
                    problems.append("a root's authority key identifier names another issuer or serial")
                }
                if hasKeyID != 0, let aki = X509_get0_authority_key_id(x509), let ski = X509_get0_subject_key_id(x509),
                    ASN1_OCTET_STRING_cmp(aki, ski) != 0
                {
                    problems.append("a root's authority key identifier differs from its subject key identifier")
                }
            }
        }
        let ski = certificate.extension(NID_subject_key_identifier)
        if ski.critical { problems.append("the subject key identifier is marked critical") }
        // Trust anchors are trusted as configured (RFC 5280 §6.1.1 d): roots in use lack it.
        if certificate.isCA, !ski.present, certificate.isIntermediate {
            problems.append("a CA certificate has no subject key identifier")
        }
        return problems
    }
}

/// RFC 5280 §4.2.1.9: a CA certificate that signs certificates carries basicConstraints with
/// cA=TRUE, marked critical (intermediates: roots in use, such as Go Daddy Class 2, mark it
/// non-critical, and anchors are trusted as configured, §6.1.1 d); pathLenConstraint only with
/// cA=TRUE. The Baseline Requirements
/// §7.1.2.7.8: a server certificate is not a CA (RFC 5280 would allow a CA certificate as a
/// leaf; the server profile follows the Forum).
struct BasicConstraintsPolicy: CertificatePolicy {
    let source = "RFC 5280 §4.2.1.9; BR §7.1.2.7.8"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        // OpenSSL's cached extension flags: no decoding on every evaluation.
        let flags = X509_get_extension_flags(certificate.x509)
        guard flags & UInt32(EXFLAG_BCONS) != 0 else { return [] }
        let ca = flags & UInt32(EXFLAG_CA) != 0
        var problems: [String] = []
        if X509_get_pathlen(certificate.x509) >= 0, !ca {
            problems.append("basicConstraints has a path length without cA=TRUE")
        }
        if certificate.isIntermediate, ca, !certificate.extension(NID_basic_constraints).critical {
            problems.append("a CA certificate's basicConstraints is not marked critical")
        }
        if certificate.isLeaf, !certificate.certificate.isSelfIssued, ca {
            problems.append("the server certificate says it is a CA (basicConstraints cA=TRUE)")
        }
        return problems
    }
}

/// RFC 5280 §4.2.1.3: a keyUsage extension asserts at least one bit, and keyCertSign only in a
/// certificate with cA=TRUE. The Baseline Requirements §7.1.2.7.11: a server certificate has
/// neither keyCertSign nor cRLSign.
struct KeyUsagePolicy: CertificatePolicy {
    let source = "RFC 5280 §4.2.1.3; BR §7.1.2.7.11"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        guard X509_get_extension_flags(certificate.x509) & UInt32(EXFLAG_KUSAGE) != 0 else { return [] }
        let usage = X509_get_key_usage(certificate.x509)
        var problems: [String] = []
        if usage == 0 { problems.append("keyUsage asserts no usage") }
        if usage & UInt32(KU_KEY_CERT_SIGN) != 0, !certificate.isCA {
            problems.append("keyUsage asserts keyCertSign without basicConstraints cA=TRUE")
        }
        if certificate.isLeaf, certificate.path.count > 1, usage & UInt32(KU_KEY_CERT_SIGN | KU_CRL_SIGN) != 0 {
            problems.append("the server certificate's keyUsage asserts keyCertSign or cRLSign")
        }
        return problems
    }
}

/// RFC 5280 §4.2.1.12 and the Baseline Requirements: a server certificate's extendedKeyUsage,
/// when present, names serverAuth and not anyExtendedKeyUsage (§7.1.2.7.10); a subordinate CA's
/// does not name anyExtendedKeyUsage (§7.1.2.10.6); a root carries none (§7.1.2.1.2). A server
/// certificate without the extension is accepted, as RFC 5280 allows (the Forum requires it of
/// CAs; refusing it would refuse private PKIs that follow RFC 5280).
struct ExtendedKeyUsagePolicy: CertificatePolicy {
    let source = "RFC 5280 §4.2.1.12; BR §7.1.2.1.2, §7.1.2.7.10, §7.1.2.10.6"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        let x509 = certificate.x509
        guard X509_get_extension_flags(x509) & UInt32(EXFLAG_XKUSAGE) != 0 else { return [] }
        let usages = X509_get_extended_key_usage(x509)
        if certificate.isAnchor { return ["a root certificate carries an extended key usage"] }
        if certificate.isLeaf {
            var problems: [String] = []
            if usages & UInt32(XKU_SSL_SERVER) == 0 {
                problems.append("the server certificate's extended key usage does not name serverAuth")
            }
            if usages & UInt32(XKU_ANYEKU) != 0 {
                problems.append("the server certificate allows any extended key usage")
            }
            return problems
        }
        return usages & UInt32(XKU_ANYEKU) != 0 ? ["a subordinate CA allows any extended key usage"] : []
    }
}
