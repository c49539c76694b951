internal import COpenSSL
internal import CSesameShims

/// RFC 5280 §4.2.2.1 and §4.2.2.2: authorityInfoAccess and subjectInfoAccess are well formed and
/// not critical. §4.2.1.13: each CRL distribution point names a location or a CRL issuer (not
/// only reasons).
struct InformationAccessPolicy: CertificatePolicy {
    let source = "RFC 5280 §4.2.1.13, §4.2.2.1, §4.2.2.2"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        let x509 = certificate.x509
        var problems: [String] = []
        if certificate.extension(NID_info_access).present, CSesameShims_information_access(x509) == 0 {
            problems.append("the authority information access extension is malformed")
        }
        if certificate.extension(NID_info_access).critical {
            problems.append("the authority information access extension is marked critical")
        }
        if certificate.extension(NID_sinfo_access).critical {
            problems.append("the subject information access extension is marked critical")
        }
        var count: Int32 = 0
        var incomplete: Int32 = 0
        let hasPoints = certificate.extension(NID_crl_distribution_points).present
        switch hasPoints ? CSesameShims_crl_distribution_points(x509, &count, &incomplete) : -1 {
        case 0: problems.append("the CRL distribution points are malformed")
        case 1:
            if count == 0 { problems.append("the CRL distribution points extension is empty") }
            if incomplete > 0 { problems.append("a CRL distribution point names neither a location nor an issuer") }
        default: break
        }
        return problems
    }
}
