internal import COpenSSL
internal import CSesameShims
import Glibc

/// A server certificate's names. The Baseline Requirements §7.1.2.7.12: subjectAltName is
/// present, every dNSName is a preferred-syntax host name (LDH labels, RFC 1034 §3.5) or a
/// wildcard that is the whole leftmost label and not over a public suffix of the list's ICANN
/// section (§7.1.2.7.12, §3.2.2.6 and RFC 6125 §6.4.3: `*.co.uk` is refused, Amazon's
/// `*.s3.amazonaws.com`, a PRIVATE-section suffix, is not); the extension is not critical when
/// the subject is not empty. RFC 5280
/// §4.2.1.6: when the subject is empty, subjectAltName is critical.
struct SubjectAlternativeNamePolicy: CertificatePolicy {
    let source = "RFC 5280 §4.2.1.6; RFC 6125 §6.4.3; BR §7.1.2.7.12"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        guard certificate.isLeaf else { return [] }
        let x509 = certificate.x509
        let san = certificate.extension(NID_subject_alt_name)
        guard san.present else { return ["the server certificate has no subject alternative name"] }
        var problems: [String] = []
        let subjectIsEmpty = X509_NAME_entry_count(X509_get_subject_name(x509)) == 0
        if san.critical && !subjectIsEmpty {
            problems.append("the subject alternative name is critical though the subject is not empty")
        }
        if !san.critical && subjectIsEmpty {
            problems.append("the subject is empty but the subject alternative name is not critical")
        }
        for case .dnsName(let text) in certificate.leafNames {
            if let problem = Self.dnsNameProblem(text) { problems.append(problem) }
        }
        return problems
    }

    /// A dNSName a certificate may carry: LDH labels, a wildcard only as the whole leftmost label,
    /// never over an ICANN-section public suffix.
    static func dnsNameProblem(_ name: String) -> String? {
        var labels = name.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        let isWildcard = labels.first == "*"
        if isWildcard { labels.removeFirst() }
        let valid =
            !labels.isEmpty && name.utf8.count <= 253
            && labels.allSatisfy { label in
                !label.isEmpty && label.utf8.count <= 63 && !label.hasPrefix("-") && !label.hasSuffix("-")
                    && label.utf8.allSatisfy { byte in
                        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                            || byte == UInt8(ascii: "-")
                    }
            }
        guard valid else { return "'\(name)' is not a valid DNS name" }
        if isWildcard, PublicSuffixList.isPublicSuffix(labels.joined(separator: "."), in: .icann) {
            return "'\(name)' is a wildcard over a public suffix"
        }
        return nil
    }
}
