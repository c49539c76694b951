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

/// The Baseline Requirements §7.1.4.3: a server certificate's commonName, when present, is a
/// character-for-character copy of one of its subjectAltName entries (a dNSName as written, an
/// iPAddress in its text form: dotted decimal for IPv4, RFC 5952 for IPv6). Host names are
/// matched against SANs only (RFC 6125 §6.4.4, RFC 9525 §6.2), so a common name unrelated to the
/// SANs misleads no one and is left alone, as RFC 5280 allows; what is refused is a common name
/// that is another spelling of a name: a SAN in other letter case, an internationalized name
/// (U-label or A-label) missing from the SANs, or an IP address written in any other form than
/// the canonical text of an iPAddress SAN.
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

/// RFC 5280 §4.2.1.10: name constraints appear only in CA certificates, marked critical, with
/// at least one of permitted and excluded subtrees. A wildcard dNSName is refused when it covers
/// an excluded subtree (CVE-2025-61727: `*.example.com` would match `bar.example.com`).
struct NameConstraintsPolicy: CertificatePolicy {
    let source = "RFC 5280 §4.2.1.10"

    func problems(of certificate: PathCertificate, host: String?) -> [String] {
        if certificate.isLeaf {
            return certificate.extension(NID_name_constraints).present && certificate.path.count > 1
                ? ["a server certificate carries name constraints"] : []
        }
        guard certificate.extension(NID_name_constraints).present else { return [] }
        var critical: Int32 = 0
        guard let constraints = CSesameShims_name_constraints(certificate.x509, &critical) else {
            return critical == -1 ? [] : ["the name constraints are malformed"]
        }
        defer { NAME_CONSTRAINTS_free(constraints) }
        var permitted: Int32 = 0
        var excluded: Int32 = 0
        CSesameShims_name_constraints_counts(constraints, &permitted, &excluded)
        if critical != 1 { return ["name constraints must be marked critical"] }
        if permitted == 0 && excluded == 0 { return ["name constraints with neither permitted nor excluded subtrees"] }
        let wildcards = Set(
            certificate.leafNames.compactMap { name -> String? in
                guard case .dnsName(let text) = name, text.hasPrefix("*.") else { return nil }
                return String(text.dropFirst(2)).lowercased()
            }
        )
        guard !wildcards.isEmpty else { return [] }
        // Each excluded name is looked up by its label suffixes, so the work grows with the number
        // of constraints plus names, never with their product (x509-limbo's nc-dos cases pair
        // 2,048 constraints with 2,048 names).
        var buffer = [CChar](repeating: 0, count: 256)
        for index in 0..<excluded {
            guard CSesameShims_name_constraints_excluded_dns(constraints, index, &buffer, Int32(buffer.count)) >= 0
            else {
                continue
            }
            var excludedName = stringFromCBuffer(buffer).lowercased()
            if excludedName.hasPrefix(".") { excludedName.removeFirst() }
            var suffix = Substring(excludedName)
            while true {
                if wildcards.contains(String(suffix)) {
                    return ["the wildcard '*.\(suffix)' covers the excluded name '\(excludedName)'"]
                }
                guard let dot = suffix.firstIndex(of: ".") else { break }
                suffix = suffix[suffix.index(after: dot)...]
            }
        }
        return []
    }
}
