internal import COpenSSL
internal import CSesameShims

/// RFC 5280 §4.2.1.10: name constraints appear only in CA certificates, with at least one of
/// permitted and excluded subtrees, and each dNSName subtree is a host name in the preferred
/// syntax (labels, no leading or trailing period: ".example.com" is a URI or mail form, and a
/// constraint a verifier cannot read as the CA meant is refused rather than guessed). RFC 5280
/// asks CAs to mark the extension critical; the Baseline Requirements (§7.1.2.5.2) allow it
/// non-critical "if compatibility with certain legacy applications ... is necessary", and every
/// verifier applies it either way, so criticality is not required. A wildcard dNSName is refused
/// when it covers an excluded subtree (CVE-2025-61727: `*.example.com` would match
/// `bar.example.com`).
struct NameConstraintsPolicy: CertificatePolicy {
    let source = "RFC 5280 §4.2.1.10; BR §7.1.2.5.2"

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
        if permitted == 0 && excluded == 0 { return ["name constraints with neither permitted nor excluded subtrees"] }
        var buffer = [CChar](repeating: 0, count: 256)
        for (isPermitted, count) in [(Int32(1), permitted), (Int32(0), excluded)] {
            for index in 0..<count {
                let length = CSesameShims_name_constraints_dns(
                    constraints,
                    isPermitted,
                    index,
                    &buffer,
                    Int32(buffer.count)
                )
                guard length >= 0 else { continue }
                let name = stringFromCBuffer(buffer)
                guard Int(length) < buffer.count, Self.isConstraintName(name) else {
                    return ["the name constraint '\(name)' is not a DNS name (RFC 5280 §4.2.1.10)"]
                }
            }
        }
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

    /// A dNSName constraint's base: LDH labels (underscores too, as DNS allows them), none empty.
    /// The empty name (every name) is a valid base.
    static func isConstraintName(_ name: String) -> Bool {
        guard !name.isEmpty else { return true }
        return name.utf8.count <= 253
            && name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { label in
                !label.isEmpty && label.utf8.count <= 63
                    && label.utf8.allSatisfy { byte in
                        (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
                    }
            }
    }
}
