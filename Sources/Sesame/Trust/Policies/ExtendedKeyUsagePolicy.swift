internal import COpenSSL

/// What each certificate of the path says its key may be used for (RFC 5280 §4.2.1.12, the
/// Baseline Requirements §7.1.2.7.10, §7.1.2.10.6, §7.1.2.1.2):
/// - The server certificate has an extendedKeyUsage, not critical, that names serverAuth and none
///   of the purposes the Forum forbids beside it: anyExtendedKeyUsage, codeSigning,
///   emailProtection, timeStamping, OCSPSigning, Certificate Transparency's precertificate signing.
///   Why a client refuses: Apple's platforms require the extension with serverAuth of every TLS
///   server certificate since iOS 13 and macOS 10.15, so a certificate without it already fails
///   there; a key certified for TLS and also for code, mail, time-stamps or OCSP answers serves
///   several protocols at once (an OCSPSigning leaf could sign revocation answers for its whole
///   issuer); a critical EKU is not the Forum's profile, which no TLS certificate needs to break.
///   clientAuth, and purposes the Forum leaves open, are accepted.
/// - A subordinate CA's extendedKeyUsage, when present, names serverAuth and not
///   anyExtendedKeyUsage: a CA restricted to other purposes (clientAuth, mail, Netscape's Server
///   Gated Crypto, which OpenSSL's purpose check still takes) may not issue server certificates;
///   browsers refuse such chains.
/// - A root carries none (§7.1.2.1.2); an anchor that is not self-issued (an intermediate the user
///   trusts directly) is held to what it says, as an intermediate is.
struct ExtendedKeyUsagePolicy: CertificatePolicy {
    let source = "RFC 5280 §4.2.1.12; BR §7.1.2.1.2, §7.1.2.7.10, §7.1.2.10.6"

    /// The purposes a server certificate must not name beside serverAuth, with their names.
    static let forbiddenInLeaf: [String: String] = [
        CertificateExtensions.anyExtendedKeyUsage: "anyExtendedKeyUsage",
        "1.3.6.1.5.5.7.3.3": "codeSigning",
        "1.3.6.1.5.5.7.3.4": "emailProtection",
        "1.3.6.1.5.5.7.3.8": "timeStamping",
        "1.3.6.1.5.5.7.3.9": "OCSPSigning",
        "1.3.6.1.4.1.11129.2.4.4": "precertificate signing",
    ]

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        let usage = certificate.extendedKeyUsage
        if case .malformed = usage { return ["the extended key usage is malformed"] }
        let purposes = usage.value ?? []
        if certificate.isLeaf {
            guard usage.isPresent else {
                return [
                    "the server certificate has no extended key usage (it must name serverAuth: openssl's -addext extendedKeyUsage=serverAuth)"
                ]
            }
            var problems: [String] = []
            if usage.isCritical { problems.append("the server certificate's extended key usage is marked critical") }
            if !purposes.contains(CertificateExtensions.serverAuth) {
                problems.append("the server certificate's extended key usage does not name serverAuth")
            }
            for purpose in purposes.compactMap({ Self.forbiddenInLeaf[$0] }).sorted() {
                problems.append("the server certificate's extended key usage also allows \(purpose)")
            }
            return problems
        }
        guard usage.isPresent else { return [] }
        if certificate.isAnchor && certificate.certificate.isSelfIssued {
            return ["a root certificate carries an extended key usage"]
        }
        var problems: [String] = []
        if !purposes.contains(CertificateExtensions.serverAuth) {
            problems.append("a CA certificate's extended key usage does not name serverAuth")
        }
        if purposes.contains(CertificateExtensions.anyExtendedKeyUsage) {
            problems.append("a subordinate CA allows any extended key usage")
        }
        return problems
    }
}
