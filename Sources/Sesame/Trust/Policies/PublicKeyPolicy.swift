internal import COpenSSL

/// Baseline Requirements §6.1.5 and §7.1.3.1: RSA keys of at least 2048 bits whose modulus is a
/// whole number of bytes, or ECDSA on P-256, P-384 or P-521; Ed25519 is allowed for private PKIs.
/// DSA and other curves are refused, at every depth.
struct PublicKeyPolicy: CertificatePolicy {
    let source = "BR §6.1.5, §7.1.3.1"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        guard let key = X509_get0_pubkey(certificate.x509) else { return ["the public key is unreadable"] }
        let bits = EVP_PKEY_get_bits(key)
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA:
            if bits < 2048 { return ["an RSA key of \(bits) bits is too short (2048 at least)"] }
            if bits % 8 != 0 { return ["an RSA modulus of \(bits) bits is not a whole number of bytes"] }
            return []
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else { return ["an unnamed EC curve"] }
            let curve = stringFromCBuffer(name)
            return ["prime256v1", "secp384r1", "secp521r1"].contains(curve)
                ? [] : ["the EC curve \(curve) is not allowed"]
        case EVP_PKEY_ED25519:
            return []
        default:
            return ["the key algorithm is not allowed (RSA, ECDSA P-256/384/521 or Ed25519)"]
        }
    }
}
