internal import COpenSSL
internal import CSesameShims
import Foundation

/// Checks of the web PKI profile (RFC 5280 and the CA/Browser Forum Baseline Requirements) that
/// OpenSSL 3.0's chain verification does not make, run on the chain it built: the kinds of
/// certificates x509-limbo shows OpenSSL accepting though they must be refused.
enum WebPKIProfile {
    /// Every violation in `chain` (leaf first, the anchor last) for a connection to `host`.
    static func violations(in chain: [Certificate], host: String?) -> [TrustFailureReason] {
        guard let leaf = chain.first else { return [] }
        var failures: [TrustFailureReason] = []
        func fail(_ depth: Int, _ certificate: Certificate, _ message: String) {
            failures.append(
                TrustFailureReason(
                    kind: .policyViolation,
                    depth: depth,
                    subject: "\(certificate.subject)",
                    openSSLCode: 0,
                    message: message
                )
            )
        }
        let anchorIndex = chain.count - 1
        for (depth, certificate) in chain.enumerated() {
            let x509 = certificate.box.pointer
            let isAnchor = depth == anchorIndex && chain.count > 1
            if !isAnchor || chain.count == 1 {
                if let problem = serialProblem(x509) { fail(depth, certificate, problem) }
            }
            if let problem = keyProblem(x509) { fail(depth, certificate, problem) }
            if CSesameShims_information_access(x509) == 0 {
                fail(depth, certificate, "the authority information access extension is malformed")
            }
            failures += akiProblems(x509, isSelfIssued: certificate.isSelfIssued, isAnchor: depth == anchorIndex).map {
                TrustFailureReason(
                    kind: .policyViolation,
                    depth: depth,
                    subject: "\(certificate.subject)",
                    openSSLCode: 0,
                    message: $0
                )
            }
            if depth > 0 {
                if X509_NAME_entry_count(X509_get_subject_name(x509)) == 0 {
                    fail(depth, certificate, "a CA certificate has an empty subject")
                }
                if let problem = nameConstraintProblem(x509, leaf: leaf) { fail(depth, certificate, problem) }
            }
            if isAnchor, X509_get_extension_flags(x509) & UInt32(EXFLAG_XKUSAGE) != 0 {
                fail(depth, certificate, "a root certificate carries an extended key usage")
            }
        }
        failures += leafProblems(leaf).map {
            TrustFailureReason(
                kind: .policyViolation,
                depth: 0,
                subject: "\(leaf.subject)",
                openSSLCode: 0,
                message: $0
            )
        }
        return failures
    }

    private static func leafProblems(_ leaf: Certificate) -> [String] {
        let x509 = leaf.box.pointer
        var problems: [String] = []
        let flags = X509_get_extension_flags(x509)
        if chainLength(leaf) > 0, flags & UInt32(EXFLAG_CA) != 0 {
            problems.append("the server certificate says it is a CA (basicConstraints cA=TRUE)")
        }
        if flags & UInt32(EXFLAG_XKUSAGE) != 0 {
            let usages = X509_get_extended_key_usage(x509)
            if usages & UInt32(XKU_SSL_SERVER) == 0 {
                problems.append("the server certificate's extended key usage does not name serverAuth")
            }
            if usages & UInt32(XKU_ANYEKU) != 0 {
                problems.append("the server certificate allows any extended key usage")
            }
        }
        let sanIndex = X509_get_ext_by_NID(x509, NID_subject_alt_name, -1)
        if sanIndex < 0 {
            problems.append("the server certificate has no subject alternative name")
        } else if let ext = X509_get_ext(x509, sanIndex), X509_EXTENSION_get_critical(ext) == 1,
            X509_NAME_entry_count(X509_get_subject_name(x509)) > 0
        {
            problems.append("the subject alternative name is critical though the subject is not empty")
        }
        if X509_get_ext_by_NID(x509, NID_name_constraints, -1) >= 0 {
            problems.append("a server certificate carries name constraints")
        }
        let names = leaf.subjectAlternativeNames
        var dnsNames: [String] = []
        var ipTexts: [String] = []
        for name in names {
            switch name {
            case .dnsName(let text):
                dnsNames.append(text)
                if let problem = dnsNameProblem(text) { problems.append(problem) }
            case .ipAddress(let bytes):
                ipTexts.append(IPAddressText.format(bytes))
            default:
                break
            }
        }
        // CABF 7.1.4.3: a common name is a character-for-character copy of a SAN. Host names are
        // matched against SANs only, so an unrelated CN is ignored; but a CN that is another
        // spelling of a SAN (case, Unicode against punycode) or an IDN missing from the SANs shows
        // a mis-issued certificate.
        for commonName in commonNames(x509) where !dnsNames.contains(commonName) && !ipTexts.contains(commonName) {
            let nearCopy = dnsNames.contains { $0.lowercased() == commonName.lowercased() }
            let internationalized =
                commonName.lowercased().contains("xn--") || !commonName.unicodeScalars.allSatisfy(\.isASCII)
            if nearCopy || internationalized {
                problems.append("the common name '\(commonName)' is not a copy of a subject alternative name")
            }
        }
        return problems
    }

    /// A dNSName a certificate may carry: LDH labels, a wildcard only as the whole leftmost label,
    /// never over a public suffix.
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
        if isWildcard, PublicSuffixList.isPublicSuffix(labels.joined(separator: ".")) {
            return "'\(name)' is a wildcard over a public suffix"
        }
        return nil
    }

    private static func chainLength(_ leaf: Certificate) -> Int { leaf.isSelfIssued ? 0 : 1 }

    private static func commonNames(_ x509: OpaquePointer) -> [String] {
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
            }
        }
        return result
    }

    private static func serialProblem(_ x509: OpaquePointer) -> String? {
        guard let serial = X509_get0_serialNumber(x509) else { return "the serial number is missing" }
        if ASN1_STRING_type(serial) == V_ASN1_NEG_INTEGER { return "the serial number is negative" }
        guard let bn = ASN1_INTEGER_to_BN(serial, nil) else { return "the serial number is unreadable" }
        defer { BN_free(bn) }
        return BN_is_zero(bn) == 1 ? "the serial number is zero" : nil
    }

    /// RSA of at least 2048 bits in whole bytes, or ECDSA on P-256, P-384 or P-521 (and Ed25519
    /// for private PKIs); DSA and other curves are refused.
    private static func keyProblem(_ x509: OpaquePointer) -> String? {
        guard let key = X509_get0_pubkey(x509) else { return "the public key is unreadable" }
        let bits = EVP_PKEY_get_bits(key)
        switch EVP_PKEY_get_base_id(key) {
        case EVP_PKEY_RSA:
            if bits < 2048 { return "an RSA key of \(bits) bits is too short (2048 at least)" }
            if bits % 8 != 0 { return "an RSA modulus of \(bits) bits is not a whole number of bytes" }
            return nil
        case EVP_PKEY_EC:
            var name = [CChar](repeating: 0, count: 64)
            var length = 0
            guard EVP_PKEY_get_group_name(key, &name, name.count, &length) == 1 else { return "an unnamed EC curve" }
            let curve = stringFromCBuffer(name)
            return ["prime256v1", "secp384r1", "secp521r1"].contains(curve)
                ? nil : "the EC curve \(curve) is not allowed"
        case EVP_PKEY_ED25519:
            return nil
        default:
            return "the key algorithm is not allowed (RSA, ECDSA P-256/384/521 or Ed25519)"
        }
    }

    private static func akiProblems(_ x509: OpaquePointer, isSelfIssued: Bool, isAnchor: Bool) -> [String] {
        var hasKeyID: Int32 = 0
        var hasIssuer: Int32 = 0
        var hasSerial: Int32 = 0
        switch CSesameShims_authority_key_id(x509, &hasKeyID, &hasIssuer, &hasSerial) {
        case -1:
            return isSelfIssued ? [] : ["the authority key identifier is missing"]
        case 0:
            return ["the authority key identifier is malformed"]
        default:
            var problems: [String] = []
            // Only the root: a self-issued intermediate (key rollover) names another key.
            if isSelfIssued && isAnchor {
                if hasIssuer != 0 || hasSerial != 0 {
                    problems.append("a root's authority key identifier names an issuer or serial")
                }
                if hasKeyID != 0, let aki = X509_get0_authority_key_id(x509), let ski = X509_get0_subject_key_id(x509),
                    ASN1_OCTET_STRING_cmp(aki, ski) != 0
                {
                    problems.append("a root's authority key identifier differs from its subject key identifier")
                }
            }
            return problems
        }
    }

    private static func nameConstraintProblem(_ x509: OpaquePointer, leaf: Certificate) -> String? {
        var critical: Int32 = 0
        var permitted: Int32 = 0
        var excluded: Int32 = 0
        switch CSesameShims_name_constraints(x509, &critical, &permitted, &excluded) {
        case -1: return nil
        case 0: return "the name constraints are malformed"
        default: break
        }
        if critical != 1 { return "name constraints must be marked critical" }
        if permitted == 0 && excluded == 0 { return "name constraints with neither permitted nor excluded subtrees" }
        // A wildcard name covers an excluded subtree (CVE-2025-61727): refuse it.
        let wildcards = leaf.subjectAlternativeNames.compactMap { name -> String? in
            guard case .dnsName(let text) = name, text.hasPrefix("*.") else { return nil }
            return String(text.dropFirst(2)).lowercased()
        }
        for index in 0..<excluded {
            var buffer = [CChar](repeating: 0, count: 256)
            guard CSesameShims_name_constraints_excluded_dns(x509, index, &buffer, Int32(buffer.count)) >= 0 else {
                continue
            }
            var excludedName = stringFromCBuffer(buffer).lowercased()
            if excludedName.hasPrefix(".") { excludedName.removeFirst() }
            for base in wildcards where excludedName == base || excludedName.hasSuffix("." + base) {
                return "the wildcard '*.\(base)' covers the excluded name '\(excludedName)'"
            }
        }
        return nil
    }
}
