internal import COpenSSL

/// The fields RFC 5280 §5 requires of a CRL, checked on each CRL given to an evaluation that
/// covers a certificate of the path (its issuer is that certificate's issuer): version 2 when it
/// has extensions (§5.1.2.1), a nextUpdate (§5.1.2.5: conforming issuers MUST include it), an
/// authority key identifier (§5.2.1) and a CRL number (§5.2.3), neither critical. OpenSSL checks
/// the signature, the times, the issuer's cRLSign and the entries.
enum CRLProfile {
    static let source = "RFC 5280 §5.1.2.1, §5.1.2.5, §5.2.1, §5.2.3"

    static func violations(_ crls: [CertificateRevocationList], path: [Certificate]) -> [TrustFailureReason] {
        var failures: [TrustFailureReason] = []
        for (depth, certificate) in path.enumerated() where !(depth == path.count - 1 && path.count > 1) {
            for crl in crls
            where X509_NAME_cmp(X509_CRL_get_issuer(crl.box.pointer), X509_get_issuer_name(certificate.box.pointer))
                == 0
            {
                for problem in problems(crl.box.pointer) {
                    failures.append(
                        TrustFailureReason(
                            kind: .policyViolation,
                            depth: depth,
                            subject: "\(certificate.subject)",
                            openSSLCode: 0,
                            message:
                                "the CRL from \(DistinguishedName(borrowing: X509_CRL_get_issuer(crl.box.pointer))) \(problem)"
                        )
                    )
                }
            }
        }
        return failures
    }

    static func problems(_ crl: OpaquePointer) -> [String] {
        var problems: [String] = []
        if X509_CRL_get_ext_count(crl) > 0, X509_CRL_get_version(crl) != 1 {
            problems.append("has extensions but is not version 2")
        }
        if X509_CRL_get0_nextUpdate(crl) == nil { problems.append("has no nextUpdate") }
        for (nid, name) in [(NID_authority_key_identifier, "authority key identifier"), (NID_crl_number, "CRL number")]
        {
            let index = X509_CRL_get_ext_by_NID(crl, nid, -1)
            if index < 0 {
                problems.append("has no \(name)")
            } else if let ext = X509_CRL_get_ext(crl, index), X509_EXTENSION_get_critical(ext) == 1 {
                problems.append("marks its \(name) critical")
            }
        }
        return problems
    }
}
