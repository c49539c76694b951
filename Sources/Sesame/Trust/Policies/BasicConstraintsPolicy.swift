internal import COpenSSL

/// RFC 5280 §4.2.1.9: a CA certificate that signs certificates carries basicConstraints with
/// cA=TRUE, marked critical (for intermediates: roots every store holds, such as Go Daddy Class 2,
/// mark it non-critical, and the anchor rule exempts them). A client's reason to hold a
/// subordinate CA to it (BR §7.1.2.10.4 requires it of every one): marked critical, the extension
/// makes a verifier that cannot read it refuse the certificate rather than take a CA for an end
/// entity, and only a CA issued outside the Forum's profile lacks it. The Baseline Requirements §7.1.2.7.8:
/// a server certificate is not a CA, whether a CA issued it or it is itself the anchor
/// (RFC 5280 §6.1 starts a path with a certificate the anchor issued; a CA's own key is for
/// signing certificates, not for serving TLS). A server's self-signed certificate trusted as its
/// own anchor is accepted when it is not a CA, as Apple's platforms and curl accept it.
/// A pathLenConstraint in a certificate without cA=TRUE binds its issuer (§4.2.1.9 "CAs MUST
/// NOT"); §6.1 reads it only in intermediates, so it is not refused.
struct BasicConstraintsPolicy: CertificatePolicy {
    let source = "RFC 5280 §4.2.1.9, §6.1; BR §7.1.2.7.8"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        // OpenSSL's cached extension flags: no decoding on every evaluation.
        let flags = X509_get_extension_flags(certificate.x509)
        guard flags & UInt32(EXFLAG_BCONS) != 0 else { return [] }
        let ca = flags & UInt32(EXFLAG_CA) != 0
        var problems: [String] = []
        if certificate.isIntermediate, ca, !certificate.extension(NID_basic_constraints).critical {
            problems.append("a CA certificate's basicConstraints is not marked critical")
        }
        if certificate.isLeaf, ca {
            problems.append(
                certificate.path.count == 1
                    ? "the server certificate is a CA certificate trusted as its own anchor (serve a certificate the CA issued)"
                    : "the server certificate says it is a CA (basicConstraints cA=TRUE)"
            )
        }
        return problems
    }
}
