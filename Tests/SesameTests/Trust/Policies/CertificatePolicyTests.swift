import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// RFC 5280 §6.1 certificate-policy processing with the §6.1.1 inputs: requireExplicitPolicy,
/// policy mappings (never from or to anyPolicy), inhibitPolicyMapping and inhibitAnyPolicy, the
/// relying party's acceptable policies, and the valid policy set of a trusted path.
@Suite struct CertificatePolicyTests {
    let pki = sharedPKI
    static let p1 = "1.3.6.1.4.1.55738.9.1"
    static let p2 = "1.3.6.1.4.1.55738.9.2"

    typealias Extension = (oid: String, critical: Bool, value: [UInt8])

    /// root → intermediate → leaf, each carrying its `Extension`s beside its usual ones.
    func evaluate(
        intermediate: [Extension],
        leaf: [Extension],
        root: [Extension] = [],
        requirements: CertificatePolicyRequirements = CertificatePolicyRequirements()
    ) throws -> TrustEvaluationResult {
        var rootShape = pki.caShape("CN=Policy Root")
        rootShape.rawExtensions += root
        let rootCertificate = try pki.issue(rootShape, issuer: nil)
        var intermediateShape = pki.caShape("CN=Policy Intermediate")
        intermediateShape.rawExtensions += intermediate
        let intermediateCertificate = try pki.issue(intermediateShape, issuer: rootCertificate)
        var leafShape = pki.leafShape()
        leafShape.rawExtensions += leaf
        let leafCertificate = try pki.issue(leafShape, issuer: intermediateCertificate)
        return CertificateChainEvaluator.evaluate(
            chain: [leafCertificate.certificate, intermediateCertificate.certificate],
            roots: .anchors([rootCertificate.certificate]),
            host: "localhost",
            policies: requirements
        )
    }

    // DER of the policy extensions (RFC 5280 §4.2.1.4, §4.2.1.5, §4.2.1.11, §4.2.1.14).
    static func der(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        let count = content.count
        let length: [UInt8] =
            count < 0x80
            ? [UInt8(count)]
            : count < 0x100 ? [0x81, UInt8(count)] : [0x82, UInt8(count >> 8), UInt8(count & 0xFF)]
        return [tag] + length + content
    }
    static func oid(_ text: String) -> [UInt8] {
        let arcs = text.split(separator: ".").compactMap { UInt64($0) }
        var body: [UInt8] = [UInt8(arcs[0] * 40 + arcs[1])]
        for arc in arcs.dropFirst(2) {
            var bytes = [UInt8(arc & 0x7F)]
            var rest = arc >> 7
            while rest > 0 {
                bytes.insert(UInt8(rest & 0x7F) | 0x80, at: 0)
                rest >>= 7
            }
            body += bytes
        }
        return der(0x06, body)
    }
    static func policies(_ oids: [String], critical: Bool = false) -> Extension {
        ("2.5.29.32", critical, der(0x30, oids.flatMap { der(0x30, oid($0)) }))
    }
    static func mappings(_ pairs: [(String, String)]) -> Extension {
        ("2.5.29.33", false, der(0x30, pairs.flatMap { der(0x30, oid($0.0) + oid($0.1)) }))
    }
    static func requireExplicitPolicy(_ skip: UInt8, critical: Bool = true) -> Extension {
        ("2.5.29.36", critical, der(0x30, [0x80, 0x01, skip]))
    }
    static func inhibitPolicyMapping(_ skip: UInt8) -> Extension {
        ("2.5.29.36", true, der(0x30, [0x81, 0x01, skip]))
    }
    static func inhibitAnyPolicy(_ skip: UInt8) -> Extension { ("2.5.29.54", true, [0x02, 0x01, skip]) }
    static let any = CertificatePolicyRequirements.anyPolicy

    @Test func aPathWithoutPoliciesIsTrustedByDefaultWithNoValidPolicy() throws {
        let result = try evaluate(intermediate: [], leaf: [])
        #expect(result.isTrusted, "\(result)")
        #expect(result.validPolicies.isEmpty)
    }

    @Test func theValidPolicySetIsThePoliciesTheWholePathCarries() throws {
        let result = try evaluate(
            intermediate: [Self.policies([Self.any])],
            leaf: [Self.policies([Self.p1, Self.p2])]
        )
        #expect(result.isTrusted, "\(result)")
        #expect(result.validPolicies == [Self.p1, Self.p2])
    }

    @Test func requireExplicitPolicyRefusesAPathThatEndsWithoutAPolicy() throws {
        let constraint = Self.requireExplicitPolicy(0)
        let noPolicy = try evaluate(
            intermediate: [constraint, Self.policies([Self.p1])],
            leaf: []
        )
        #expect(noPolicy.contains(.certificatePolicy), "\(noPolicy)")
        let otherPolicy = try evaluate(
            intermediate: [constraint, Self.policies([Self.p1])],
            leaf: [Self.policies([Self.p2])]
        )
        #expect(otherPolicy.contains(.certificatePolicy), "\(otherPolicy)")
        let samePolicy = try evaluate(
            intermediate: [constraint, Self.policies([Self.p1])],
            leaf: [Self.policies([Self.p1])]
        )
        #expect(samePolicy.isTrusted, "\(samePolicy)")
    }

    /// RFC 5280 §4.2.1.11 binds the CA to mark policyConstraints critical; §6.1 processes it
    /// either way, and so does Sesame.
    @Test func aNonCriticalPolicyConstraintIsProcessedNotRefused() throws {
        let constraint = Self.requireExplicitPolicy(0, critical: false)
        let good = try evaluate(
            intermediate: [constraint, Self.policies([Self.p1])],
            leaf: [Self.policies([Self.p1])]
        )
        #expect(good.isTrusted, "\(good)")
        let bad = try evaluate(intermediate: [constraint, Self.policies([Self.p1])], leaf: [])
        #expect(bad.contains(.certificatePolicy), "\(bad)")
    }

    @Test func mappingsAreFollowedUnlessInhibited() throws {
        let intermediate = [
            Self.policies([Self.p1]), Self.mappings([(Self.p1, Self.p2)]),
        ]
        var pinned = CertificatePolicyRequirements()
        pinned.acceptablePolicies = [Self.p1]
        pinned.requiresExplicitPolicy = true
        let mapped = try evaluate(
            intermediate: intermediate,
            leaf: [Self.policies([Self.p2])],
            root: [Self.policies([Self.any])],
            requirements: pinned
        )
        #expect(mapped.isTrusted, "\(mapped)")
        #expect(mapped.validPolicies == [Self.p1])
        pinned.inhibitsPolicyMapping = true
        let inhibited = try evaluate(
            intermediate: intermediate,
            leaf: [Self.policies([Self.p2])],
            root: [Self.policies([Self.any])],
            requirements: pinned
        )
        #expect(inhibited.contains(.certificatePolicy), "\(inhibited)")
    }

    @Test func aMappingFromOrToAnyPolicyIsRefused() throws {
        for mapping in [(Self.any, Self.p2), (Self.p1, Self.any)] {
            let result = try evaluate(
                intermediate: [Self.policies([Self.any]), Self.mappings([mapping])],
                leaf: [Self.policies([Self.p2])]
            )
            #expect(result.contains(.certificatePolicy), "\(mapping): \(result)")
        }
    }

    /// inhibitAnyPolicy applies to the certificates after the one that sets it (§6.1.4 (j)): a
    /// leaf that asserts only anyPolicy then asserts nothing.
    @Test func inhibitAnyPolicyStopsAnyPolicyStandingForOthers() throws {
        var explicit = CertificatePolicyRequirements()
        explicit.requiresExplicitPolicy = true
        let allowed = try evaluate(
            intermediate: [Self.policies([Self.p1])],
            leaf: [Self.policies([Self.any])],
            requirements: explicit
        )
        #expect(allowed.isTrusted, "\(allowed)")
        #expect(allowed.validPolicies == [Self.p1])
        let inhibited = try evaluate(
            intermediate: [Self.policies([Self.p1]), Self.inhibitAnyPolicy(0)],
            leaf: [Self.policies([Self.any])],
            requirements: explicit
        )
        #expect(inhibited.contains(.certificatePolicy), "\(inhibited)")
        explicit.inhibitsAnyPolicy = true
        let inhibitedByInput = try evaluate(
            intermediate: [Self.policies([Self.p1])],
            leaf: [Self.policies([Self.any])],
            requirements: explicit
        )
        #expect(inhibitedByInput.contains(.certificatePolicy), "\(inhibitedByInput)")
    }

    @Test func aPinnedPolicyRefusesPathsWithoutIt() throws {
        var pinned = CertificatePolicyRequirements()
        pinned.acceptablePolicies = [Self.p1]
        pinned.requiresExplicitPolicy = true
        let good = try evaluate(
            intermediate: [Self.policies([Self.p1, Self.p2])],
            leaf: [Self.policies([Self.p1])],
            requirements: pinned
        )
        #expect(good.isTrusted, "\(good)")
        #expect(good.validPolicies == [Self.p1])
        let other = try evaluate(
            intermediate: [Self.policies([Self.p1, Self.p2])],
            leaf: [Self.policies([Self.p2])],
            requirements: pinned
        )
        #expect(other.contains(.certificatePolicy), "\(other)")
    }

    @Test func anAcceptablePolicyThatIsNoOIDIsAClearFailure() throws {
        var requirements = CertificatePolicyRequirements()
        requirements.acceptablePolicies = ["ev"]
        let result = try evaluate(intermediate: [], leaf: [], requirements: requirements)
        #expect(result.contains(.certificatePolicy))
        #expect(result.description.contains("'ev'"))
    }

    /// A hostile path: CAs with a thousand policies each, a thousand mappings between them. The
    /// policy tree's bound stops the work, and the path is refused with that reason.
    /// A CA with policyConstraints and no certificatePolicies empties the valid policy tree
    /// (§6.1.3 (e)); the path then stands or falls by the explicit_policy count alone (these
    /// paths are counted by Sesame: OpenSSL leaks when it processes them).
    @Test func policyConstraintsWithoutPoliciesAreCounted() throws {
        let now = try evaluate(intermediate: [Self.requireExplicitPolicy(0)], leaf: [Self.policies([Self.p1])])
        #expect(now.contains(.certificatePolicy), "\(now)")
        let later = try evaluate(intermediate: [Self.requireExplicitPolicy(5)], leaf: [Self.policies([Self.p1])])
        #expect(later.isTrusted, "\(later)")
        #expect(later.validPolicies.isEmpty)
        let mappingOnly = try evaluate(intermediate: [Self.inhibitPolicyMapping(0)], leaf: [])
        #expect(mappingOnly.isTrusted, "\(mappingOnly)")
        var explicit = CertificatePolicyRequirements()
        explicit.requiresExplicitPolicy = true
        let required = try evaluate(intermediate: [Self.inhibitPolicyMapping(0)], leaf: [], requirements: explicit)
        #expect(required.contains(.certificatePolicy), "\(required)")
        // The count of a leaf-level requireExplicitPolicy of 0 (§6.1.5 (b)).
        let atLeaf = try evaluate(
            intermediate: [Self.inhibitPolicyMapping(3)],
            leaf: [Self.requireExplicitPolicy(0, critical: false)]
        )
        #expect(atLeaf.contains(.certificatePolicy), "\(atLeaf)")
    }

    @Test func aHostileWebOfPoliciesAndMappingsIsBounded() throws {
        let policies = (0..<1000).map { "1.3.6.1.4.1.55738.8.\($0)" }
        let mapped = (0..<1000).map { ("1.3.6.1.4.1.55738.8.\($0)", "1.3.6.1.4.1.55738.7.\($0 % 10)") }
        let result = try evaluate(
            intermediate: [Self.policies(policies), Self.mappings(mapped)],
            leaf: [Self.policies((0..<10).map { "1.3.6.1.4.1.55738.7.\($0)" })],
            root: [Self.policies(policies)]
        )
        #expect(result.contains(.certificatePolicy), "\(result)")
        #expect(result.description.contains("exceed what policy processing is bounded to"), "\(result)")
    }
}
