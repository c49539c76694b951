internal import COpenSSL

/// The Baseline Requirements §7.1.3.2: certificates are signed with SHA-256, SHA-384 or SHA-512,
/// with RSASSA-PKCS1-v1_5, RSASSA-PSS (its hash and MGF1 hash the same SHA-2) or ECDSA; Ed25519 is
/// accepted as the key rule accepts it (private PKIs). SHA-1, MD5 and the others are refused:
/// SHA-1 collisions are practical (SHAttered, 2017; a chosen-prefix collision, 2020), so a SHA-1
/// signature proves nothing about what was signed, and browsers refuse it in certificates since
/// 2017. OpenSSL 3.0 checks the signature but, outside a TLS context's security level, not its
/// algorithm.
///
/// An anchor's own signature is not checked (RFC 5280 §6.1: the anchor is trusted for its name
/// and key), so roots self-signed with SHA-1, which every system store still holds, stay usable;
/// nor is that of a lone pinned certificate (a path of one).
struct SignatureAlgorithmPolicy: CertificatePolicy {
    let source = "BR §7.1.3.2"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        guard !certificate.isAnchor, certificate.path.count > 1 else { return [] }
        var digest: Int32 = 0
        var keyType: Int32 = 0
        var bits: Int32 = 0
        var flags: UInt32 = 0
        let signature = X509_get_signature_nid(certificate.x509)
        if signature == NID_ED25519 { return [] }
        guard X509_get_signature_info(certificate.x509, &digest, &keyType, &bits, &flags) == 1 else {
            return ["the signature algorithm cannot be read"]
        }
        let name = OBJ_nid2ln(signature).map { String(cString: $0) } ?? "algorithm \(signature)"
        guard [NID_sha256, NID_sha384, NID_sha512].contains(digest) else {
            let hashes = [NID_sha1: "SHA-1", NID_md5: "MD5", NID_sha224: "SHA-224", NID_md5_sha1: "MD5-SHA1"]
            let hash = hashes[digest] ?? OBJ_nid2sn(digest).map { String(cString: $0) } ?? "an unknown hash"
            return ["it is signed with \(name) (\(hash)); only SHA-256, SHA-384 and SHA-512 are accepted"]
        }
        guard [EVP_PKEY_RSA, EVP_PKEY_RSA_PSS, EVP_PKEY_EC].contains(keyType) else {
            return ["it is signed with \(name), which is not RSA, RSASSA-PSS or ECDSA"]
        }
        return []
    }
}
