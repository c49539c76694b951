internal import COpenSSL
internal import CSesameShims

/// The certificate-policy inputs of path validation (RFC 5280 §6.1.1 (c), (e), (f), (g)): which
/// policies the relying party accepts and how strictly the path must carry them.
///
/// The defaults (any policy, nothing required or inhibited) are what web servers need: policies
/// are still processed (§6.1.3, §6.1.4), so a CA in the path that sets requireExplicitPolicy,
/// maps a policy to or from anyPolicy, or breaks inhibitPolicyMapping or inhibitAnyPolicy refuses
/// the path, but a path that asserts no policy is trusted. Enterprise and government PKIs that
/// certify servers under a policy OID pin it with ``acceptablePolicies`` and
/// ``requiresExplicitPolicy``:
///
/// ```swift
/// var requirements = CertificatePolicyRequirements()
/// requirements.acceptablePolicies = ["2.16.840.1.101.3.2.1.48.1"]
/// requirements.requiresExplicitPolicy = true
/// ```
///
/// The resulting valid policy set is ``TrustEvaluationResult/validPolicies``.
public struct CertificatePolicyRequirements: Hashable, Sendable {
    /// The anyPolicy identifier (RFC 5280 §4.2.1.4).
    public static let anyPolicy = "2.5.29.32.0"

    /// user-initial-policy-set: the policies acceptable to the relying party, as dotted OIDs;
    /// ``anyPolicy`` (the default) accepts any.
    public var acceptablePolicies: Set<String> = [Self.anyPolicy]
    /// initial-explicit-policy: the path must be valid for at least one acceptable policy.
    /// Without it, a path with no valid policy is trusted (as RFC 5280 says), so pinning a
    /// policy with ``acceptablePolicies`` takes this too.
    public var requiresExplicitPolicy = false
    /// initial-policy-mapping-inhibit: policy mappings in the path are not followed.
    public var inhibitsPolicyMapping = false
    /// initial-any-policy-inhibit: anyPolicy in a certificate does not stand for other policies.
    public var inhibitsAnyPolicy = false

    /// The defaults: any policy, nothing required or inhibited.
    public init() {}

    /// True when ``acceptablePolicies`` is only ``anyPolicy``.
    var acceptsAnyPolicy: Bool { acceptablePolicies.isEmpty || acceptablePolicies.contains(Self.anyPolicy) }

    /// Whether `text` is a dotted object identifier OpenSSL can encode (at least two arcs).
    public static func isObjectIdentifier(_ text: String) -> Bool {
        let arcs = text.split(separator: ".", omittingEmptySubsequences: false)
        guard arcs.count >= 2, arcs.allSatisfy({ !$0.isEmpty && $0.allSatisfy(\.isASCIIDigit) }) else { return false }
        guard let object = OBJ_txt2obj(text, 1) else { return false }
        ASN1_OBJECT_free(object)
        return true
    }

    /// Sets these requirements on OpenSSL's verification parameters (with `processing` false,
    /// only checks them: ``ExplicitPolicyCount`` decides); returns the policies that are not
    /// object identifiers (nothing is set then).
    func configure(_ parameters: OpaquePointer?, processing: Bool = true) -> [String] {
        let invalid = acceptablePolicies.filter { $0 != Self.anyPolicy && !Self.isObjectIdentifier($0) }.sorted()
        guard invalid.isEmpty, processing else { return invalid }
        var flags = X509_V_FLAG_POLICY_CHECK
        if requiresExplicitPolicy { flags |= X509_V_FLAG_EXPLICIT_POLICY }
        if inhibitsPolicyMapping { flags |= X509_V_FLAG_INHIBIT_MAP }
        if inhibitsAnyPolicy { flags |= X509_V_FLAG_INHIBIT_ANY }
        X509_VERIFY_PARAM_set_flags(parameters, UInt(flags))
        // Always given, anyPolicy too: OpenSSL reads no initial set as an empty one when an
        // explicit policy is required.
        for policy in acceptablePolicies.isEmpty ? [Self.anyPolicy] : acceptablePolicies.sorted() {
            // anyPolicy is OpenSSL's static object (freeing it is a no-op): no parsing per evaluation.
            let object = policy == Self.anyPolicy ? OBJ_nid2obj(NID_any_policy) : OBJ_txt2obj(policy, 1)
            if let object, X509_VERIFY_PARAM_add0_policy(parameters, object) != 1 { ASN1_OBJECT_free(object) }
        }
        return []
    }

    /// The valid policy set of a verified path (RFC 5280 §6.1.5 (g)): the authority-constrained
    /// policies (those CAs vouch for from the anchor down, in their own domain when the path
    /// maps them) within ``acceptablePolicies``. Empty when the valid policy tree is empty (a
    /// certificate of the path asserts no policy).
    func validPolicies(of context: OpaquePointer) -> [String] {
        guard let tree = X509_STORE_CTX_get0_policy_tree(context) else { return [] }
        var policies: Set<String> = []
        var index: Int32 = 0
        while let policy = CSesameShims_policy_tree_user_policy(tree, index) {
            policies.insert(Self.text(of: policy))
            index += 1
        }
        return policies.sorted()
    }

    static func text(of object: OpaquePointer) -> String {
        var buffer = [CChar](repeating: 0, count: 128)
        let length = OBJ_obj2txt(&buffer, Int32(buffer.count), object, 1)
        guard length > 0, Int(length) < buffer.count else { return "?" }
        return String(decoding: buffer.prefix(Int(length)).map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}

extension Character {
    fileprivate var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
