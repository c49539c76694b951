internal import COpenSSL
internal import CSesameShims

/// RFC 5280 §4.2.1.4: a policy OID appears at most once in certificatePolicies. §4.2.1.11:
/// policyConstraints is critical and not an empty sequence. §4.2.1.14: inhibitAnyPolicy is
/// critical. Both of the latter appear only in CA certificates.
struct CertificatePoliciesPolicy: CertificatePolicy {
    let source = "RFC 5280 §4.2.1.4, §4.2.1.11, §4.2.1.14"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        let x509 = certificate.x509
        var problems: [String] = []
        var count: Int32 = 0
        var duplicates: Int32 = 0
        let hasPolicies = certificate.extension(NID_certificate_policies).present
        switch hasPolicies ? CSesameShims_certificate_policies(x509, &count, &duplicates) : -1 {
        case 0: problems.append("certificatePolicies is malformed")
        case 1:
            if duplicates != 0 { problems.append("certificatePolicies names a policy more than once") }
            if count == 0 { problems.append("certificatePolicies is empty") }
        default: break
        }
        let constraints = certificate.extension(NID_policy_constraints)
        if constraints.present {
            if !certificate.isCA { problems.append("policyConstraints in a certificate that is not a CA") }
            if !constraints.critical { problems.append("policyConstraints is not marked critical") }
            var require: Int32 = 0
            var inhibit: Int32 = 0
            switch CSesameShims_policy_constraints(x509, &require, &inhibit) {
            case 0: problems.append("policyConstraints is malformed")
            case 1 where require == 0 && inhibit == 0: problems.append("policyConstraints is an empty sequence")
            default: break
            }
        }
        let inhibitAny = certificate.extension(NID_inhibit_any_policy)
        if inhibitAny.present {
            if !certificate.isCA { problems.append("inhibitAnyPolicy in a certificate that is not a CA") }
            if !inhibitAny.critical { problems.append("inhibitAnyPolicy is not marked critical") }
        }
        return problems
    }
}

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
