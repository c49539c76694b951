internal import COpenSSL
internal import CSesameShims
import Glibc

/// The Baseline Requirements §7.1.4.3: a server certificate's commonName, when present, is a
/// character-for-character copy of one of its subjectAltName entries (a dNSName as written, an
/// iPAddress in its text form: dotted decimal for IPv4, RFC 5952 for IPv6).
///
/// Half of it is enforced. Host names are matched against SANs only (RFC 6125 §6.4.4, RFC 9525
/// §6.2), and no browser checks this rule, so a common name that names something the SANs do
/// not misleads no one here and is left alone, as RFC 5280 allows: private PKIs name their
/// servers so (Kubernetes' API server certificate says CN=kube-apiserver beside its SANs), and
/// x509-limbo's own valid leaves carry CN=example.com beside unrelated SANs. What is refused,
/// for a client's reason, is a common name that is another spelling of a name the certificate
/// serves: a SAN in other letter case, an internationalized name (U-label or A-label) missing
/// from the SANs, or an IP address written in any other form than the canonical text of an
/// iPAddress SAN. Those are the material of a confusion between verifiers that still fall back
/// to the common name and compare names differently (one reads `0xC0A80101` or `192.168.001.001`
/// as an address, another as a name).
struct CommonNamePolicy: CertificatePolicy {
    let source = "BR §7.1.4.3; RFC 6125 §6.4.4; RFC 5952 §4"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        guard certificate.isLeaf else { return [] }
        let commonNames = Self.commonNames(certificate.x509)
        guard !commonNames.isEmpty else { return [] }
        var dnsNames: [String] = []
        for case .dnsName(let text) in certificate.leafNames { dnsNames.append(text) }
        let strays = commonNames.filter { !dnsNames.contains($0) }
        guard !strays.isEmpty else { return [] }
        var ipTexts: [String] = []
        for case .ipAddress(let bytes) in certificate.leafNames { ipTexts.append(IPAddressText.format(bytes)) }
        var problems: [String] = []
        for commonName in strays where !ipTexts.contains(commonName) {
            let otherCase = dnsNames.contains { $0.lowercased() == commonName.lowercased() }
            let lowered = commonName.lowercased()
            let internationalized =
                lowered.hasPrefix("xn--") || lowered.contains(".xn--")
                || !commonName.unicodeScalars.allSatisfy(\.isASCII)
            if otherCase || internationalized || Self.isAddressSpelling(commonName) {
                problems.append("the common name '\(commonName)' is not a copy of a subject alternative name")
            }
        }
        return problems
    }

    /// Whether `text` is an IP address in some spelling: IPv6 text in any case or compression,
    /// or IPv4 as `inet_aton` reads it (hexadecimal, octal, leading zeros, fewer parts).
    static func isAddressSpelling(_ text: String) -> Bool {
        var v4 = in_addr()
        if inet_aton(text, &v4) != 0 { return true }
        var v6 = in6_addr()
        return inet_pton(AF_INET6, text, &v6) == 1
    }

    static func commonNames(_ x509: OpaquePointer) -> [String] {
        guard let subject = X509_get_subject_name(x509) else { return [] }
        var result: [String] = []
        var index: Int32 = -1
        while true {
            index = X509_NAME_get_index_by_NID(subject, NID_commonName, index)
            guard index >= 0, let entry = X509_NAME_get_entry(subject, index),
                let data = X509_NAME_ENTRY_get_data(entry)
            else { break }
            var utf8: UnsafeMutablePointer<UInt8>? = nil
            let length = ASN1_STRING_to_UTF8(&utf8, data)
            if length >= 0, let utf8 {
                result.append(String(decoding: UnsafeBufferPointer(start: utf8, count: Int(length)), as: UTF8.self))
                CSesameShims_OPENSSL_free(utf8)
            } else {
                result.append("")
            }
        }
        return result
    }
}
