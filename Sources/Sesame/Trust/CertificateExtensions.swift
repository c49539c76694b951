internal import COpenSSL
internal import CSesameShims

/// An extension a rule reads, decoded once: absent, present but not decodable, or present.
enum DecodedExtension<Value> {
    case absent
    case malformed(critical: Bool)
    case present(Value, critical: Bool)

    var value: Value? {
        if case .present(let value, _) = self { return value }
        return nil
    }

    var isPresent: Bool {
        if case .absent = self { return false }
        return true
    }

    var isCritical: Bool {
        switch self {
        case .absent: false
        case .malformed(let critical), .present(_, let critical): critical
        }
    }
}

/// One policy of a certificatePolicies extension: its OID and its qualifiers' OIDs.
struct PolicyInformation: Hashable {
    let policy: String
    let qualifiers: [String]
}

/// The extensions of a certificate that carry OIDs (purposes, policies, mappings), and the
/// policy skip counts, decoded from the certificate's DER by OpenSSL into dotted OIDs. Each list
/// is bounded (``entryLimit`` entries; a longer one is reported as malformed), so that a hostile
/// certificate cannot make a path's rules walk millions of entries.
enum CertificateExtensions {
    /// The most entries of one list extension read.
    static let entryLimit = 1_000

    static let anyPolicy = "2.5.29.32.0"
    static let serverAuth = "1.3.6.1.5.5.7.3.1"
    static let clientAuth = "1.3.6.1.5.5.7.3.2"
    static let anyExtendedKeyUsage = "2.5.29.37.0"

    /// extendedKeyUsage's purposes.
    static func extendedKeyUsage(_ x509: OpaquePointer) -> DecodedExtension<[String]> {
        lines(x509, CSesameShims_extended_key_usage_text).map { $0 }
    }

    /// certificatePolicies, in order.
    static func certificatePolicies(_ x509: OpaquePointer) -> DecodedExtension<[PolicyInformation]> {
        lines(x509, CSesameShims_certificate_policies_text).map { lines in
            lines.map { line in
                let parts = line.split(separator: " ").map(String.init)
                return PolicyInformation(policy: parts.first ?? "", qualifiers: Array(parts.dropFirst()))
            }
        }
    }

    /// policyMappings, as (issuerDomainPolicy, subjectDomainPolicy) pairs in order.
    static func policyMappings(_ x509: OpaquePointer) -> DecodedExtension<[(issuer: String, subject: String)]> {
        lines(x509, CSesameShims_policy_mappings_text).map { lines in
            lines.compactMap { line -> (issuer: String, subject: String)? in
                let parts = line.split(separator: " ").map(String.init)
                return parts.count == 2 ? (parts[0], parts[1]) : nil
            }
        }
    }

    /// policyConstraints' skip counts (nil: the field is absent; Int.max: too large to read).
    static func policyConstraints(
        _ x509: OpaquePointer,
        critical: Bool
    ) -> DecodedExtension<(requireExplicit: Int?, inhibitMapping: Int?)> {
        var require = -1
        var inhibit = -1
        switch CSesameShims_policy_constraints(x509, &require, &inhibit) {
        case -1: return .absent
        case 1: return .present((skip(require), skip(inhibit)), critical: critical)
        default: return .malformed(critical: critical)
        }
    }

    /// inhibitAnyPolicy's skip count (Int.max: too large to read).
    static func inhibitAnyPolicy(_ x509: OpaquePointer, critical: Bool) -> DecodedExtension<Int> {
        var value = -1
        switch CSesameShims_inhibit_any_policy(x509, &value) {
        case -1: return .absent
        case 1: return .present(skip(value) ?? 0, critical: critical)
        default: return .malformed(critical: critical)
        }
    }

    private static func skip(_ value: Int) -> Int? {
        value == -1 ? nil : value < 0 ? Int.max : value
    }

    private typealias TextDecoder = (
        OpaquePointer, Int32, UnsafeMutablePointer<Int32>, UnsafeMutablePointer<Int32>
    ) -> UnsafeMutablePointer<CChar>?

    private static func lines(_ x509: OpaquePointer, _ decode: TextDecoder) -> DecodedExtension<[String]> {
        var count: Int32 = 0
        var critical: Int32 = -1
        guard let text = decode(x509, Int32(entryLimit), &count, &critical) else {
            return critical == -1 ? .absent : .malformed(critical: critical == 1)
        }
        defer { CSesameShims_OPENSSL_free(text) }
        guard count <= entryLimit else { return .malformed(critical: critical == 1) }
        let lines = String(cString: text).split(separator: "\n").map(String.init)
        return .present(lines, critical: critical == 1)
    }
}

extension DecodedExtension {
    func map<Other>(_ transform: (Value) -> Other) -> DecodedExtension<Other> {
        switch self {
        case .absent: .absent
        case .malformed(let critical): .malformed(critical: critical)
        case .present(let value, let critical): .present(transform(value), critical: critical)
        }
    }
}
