internal import COpenSSL

/// RFC 5280 §4.2.1.3: a keyUsage extension asserts at least one bit, and keyCertSign only in a
/// certificate with cA=TRUE. The Baseline Requirements §7.1.2.7.11: a server certificate asserts
/// neither keyCertSign nor cRLSign (a key that signs certificates or CRLs is a CA's).
///
/// A client's rule beside them: a server certificate's keyUsage permits a use TLS makes of its
/// key, digitalSignature (every ECDHE handshake and TLS 1.3, RFC 8446 §4.4.2.2) or, for an RSA
/// key, keyEncipherment (TLS 1.2 RSA key transport, RFC 5246 §7.4.2). A certificate that permits
/// neither cannot authenticate any handshake, so it is refused with that reason rather than left
/// to fail later as a handshake error.
///
/// Not refused: further bits a server certificate's key type cannot perform (keyEncipherment on an EC key,
/// keyAgreement on an RSA key), which §7.1.2.7.11 also forbids CAs to set. The bit grants nothing
/// the key can do, no browser refuses it, and common private issuers set it (cert-manager's
/// default usages for ECDSA certificates are "digital signature, key encipherment"), so refusing
/// would refuse working servers for no safety.
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
        if certificate.isLeaf, certificate.path.count > 1 {
            if usage & UInt32(KU_KEY_CERT_SIGN | KU_CRL_SIGN) != 0 {
                problems.append("the server certificate's keyUsage asserts keyCertSign or cRLSign")
            }
            if usage != 0, !Self.permitsTLS(usage, certificate.x509) {
                problems.append(
                    "the server certificate's keyUsage permits no use TLS makes of its key (digitalSignature, or keyEncipherment for RSA)"
                )
            }
        }
        return problems
    }

    static func permitsTLS(_ usage: UInt32, _ x509: OpaquePointer) -> Bool {
        if usage & UInt32(KU_DIGITAL_SIGNATURE) != 0 { return true }
        guard usage & UInt32(KU_KEY_ENCIPHERMENT) != 0, let key = X509_get0_pubkey(x509) else { return false }
        return EVP_PKEY_get_base_id(key) == EVP_PKEY_RSA
    }
}
