import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// One case of a rule: the shapes of the root, the intermediate and the leaf (each changed from a
/// conforming one), and the failure expected (nil: the chain is trusted).
struct RuleCase: Sendable, CustomTestStringConvertible {
    let rule: String
    var root: @Sendable (inout TestPKI.Shape) -> Void = { _ in }
    var intermediate: @Sendable (inout TestPKI.Shape) -> Void = { _ in }
    var leaf: @Sendable (inout TestPKI.Shape) -> Void = { _ in }
    /// A fragment of the failure expected; nil when the chain must be trusted.
    let expected: String?
    var host = "localhost"

    var testDescription: String { "\(rule): \(expected.map { "refused (\($0))" } ?? "trusted")" }
}

func replacing(_ name: String, with value: String) -> @Sendable (inout TestPKI.Shape) -> Void {
    { shape in
        shape.extensions.removeAll { $0.name == name }
        shape.extensions.append((name, value))
    }
}

func adding(_ name: String, _ value: String) -> @Sendable (inout TestPKI.Shape) -> Void {
    { shape in shape.extensions.append((name, value)) }
}

func raw(
    _ oid: String,
    critical: Bool,
    _ value: [UInt8],
    replacing name: String? = nil
) -> @Sendable (inout TestPKI.Shape) -> Void {
    { shape in
        if let name { shape.extensions.removeAll { $0.name == name } }
        shape.rawExtensions.append((oid, critical, value))
    }
}

/// Each rule of the server profile, from its section: certificates built with TestPKI that violate
/// exactly that rule, and ones that satisfy it.
@Suite struct ServerProfileRuleTests {
    /// PolicyInformation for the Baseline Requirements' domain-validated policy, 2.23.140.1.2.1.
    static let policy: [UInt8] = [0x30, 0x08, 0x06, 0x06, 0x67, 0x81, 0x0C, 0x01, 0x02, 0x01]

    static let cases: [RuleCase] = [
        RuleCase(rule: "a conforming chain", expected: nil),
        // RFC 5280 §4.1.2.1
        RuleCase(rule: "version 3 with extensions", leaf: { $0.version = 3 }, expected: nil),
        RuleCase(rule: "version 1 with extensions", leaf: { $0.version = 1 }, expected: "version"),
        // RFC 5280 §4.1.2.2
        RuleCase(
            rule: "a 20-octet serial",
            leaf: { $0.serial = [0x7F] + Array(repeating: 0xAB, count: 19) },
            expected: nil
        ),
        RuleCase(
            rule: "a 21-octet serial",
            leaf: { $0.serial = [0x80] + Array(repeating: 0xAB, count: 19) },
            expected: "21 octets"
        ),
        RuleCase(rule: "a zero serial", leaf: { $0.serial = [0] }, expected: "serial number is zero"),
        RuleCase(
            rule: "a negative serial",
            leaf: {
                $0.serial = [5]
                $0.negativeSerial = true
            },
            expected: "negative"
        ),
        // RFC 5280 §4.1.2.5
        RuleCase(rule: "GeneralizedTime before 2050", leaf: { $0.generalizedTime = true }, expected: "GeneralizedTime"),
        // RFC 5280 §4.1.2.6
        RuleCase(rule: "a CA with an empty subject", intermediate: { $0.subject = "" }, expected: "empty subject"),
        // BR §6.1.5
        RuleCase(rule: "RSA 2048", leaf: { $0.key = .rsa2048 }, expected: nil),
        RuleCase(rule: "RSA 1024", leaf: { $0.key = .rsa1024 }, expected: "too short"),
        RuleCase(rule: "ECDSA P-224", intermediate: { $0.key = .ecdsaP224 }, expected: "curve"),
        // RFC 5280 §4.2.1.1
        RuleCase(
            rule: "a leaf without AKI",
            leaf: { $0.authorityKeyIdentifier = false },
            expected: "authority key identifier is missing"
        ),
        RuleCase(
            rule: "a critical AKI",
            leaf: {
                $0.authorityKeyIdentifier = false
                $0.extensions.append(("authorityKeyIdentifier", "critical,keyid:always"))
            },
            expected: "critical"
        ),
        RuleCase(
            rule: "a root whose AKI names itself",
            root: {
                $0.authorityKeyIdentifier = false
                $0.extensions.append(("authorityKeyIdentifier", "issuer:always"))
            },
            expected: nil
        ),
        RuleCase(
            rule: "a root whose AKI names another serial",
            root: {
                $0.authorityKeyIdentifier = false
                $0.rawExtensions.append(("2.5.29.35", false, [0x30, 0x04, 0x82, 0x02, 0x04, 0xD2]))
            },
            expected: "names another issuer or serial"
        ),
        // RFC 5280 §4.2.1.2
        RuleCase(
            rule: "a critical SKI",
            leaf: {
                $0.subjectKeyIdentifier = false
                $0.extensions.append(("subjectKeyIdentifier", "critical,hash"))
            },
            expected: "subject key identifier is marked critical"
        ),
        RuleCase(
            rule: "an intermediate without SKI",
            intermediate: { $0.subjectKeyIdentifier = false },
            leaf: {
                $0.authorityKeyIdentifier = false
                $0.extensions.append(("authorityKeyIdentifier", "issuer:always"))
            },
            expected: "no subject key identifier"
        ),
        // RFC 5280 §4.2.1.9, BR §7.1.2.7.8
        RuleCase(
            rule: "an intermediate with non-critical basicConstraints",
            intermediate: replacing("basicConstraints", with: "CA:TRUE"),
            expected: "not marked critical"
        ),
        RuleCase(
            rule: "a path length without cA",
            leaf: replacing("basicConstraints", with: "critical,CA:FALSE,pathlen:0"),
            expected: "path length without cA"
        ),
        RuleCase(
            rule: "a leaf that is a CA",
            leaf: replacing("basicConstraints", with: "critical,CA:TRUE"),
            expected: "says it is a CA"
        ),
        RuleCase(
            rule: "a leaf without basicConstraints",
            leaf: { $0.extensions.removeAll { $0.name == "basicConstraints" } },
            expected: nil
        ),
        // RFC 5280 §4.2.1.3, BR §7.1.2.7.11
        RuleCase(
            rule: "keyUsage with no bit",
            leaf: raw("2.5.29.15", critical: true, [0x03, 0x01, 0x00], replacing: "keyUsage"),
            expected: "asserts no usage"
        ),
        RuleCase(
            rule: "keyCertSign without cA",
            leaf: replacing("keyUsage", with: "critical,digitalSignature,keyCertSign"),
            expected: "keyCertSign without"
        ),
        RuleCase(
            rule: "a leaf with cRLSign",
            leaf: replacing("keyUsage", with: "critical,digitalSignature,cRLSign"),
            expected: "keyCertSign or cRLSign"
        ),
        RuleCase(
            rule: "a leaf without keyUsage",
            leaf: { $0.extensions.removeAll { $0.name == "keyUsage" } },
            expected: nil
        ),
        // RFC 5280 §4.2.1.12, BR §7.1.2.1.2, §7.1.2.7.10, §7.1.2.10.6
        RuleCase(
            rule: "a leaf without serverAuth",
            leaf: replacing("extendedKeyUsage", with: "clientAuth"),
            expected: "serverAuth"
        ),
        RuleCase(
            rule: "a leaf with anyExtendedKeyUsage",
            leaf: replacing("extendedKeyUsage", with: "serverAuth,anyExtendedKeyUsage"),
            expected: "any extended key usage"
        ),
        RuleCase(
            rule: "a root with an EKU",
            root: adding("extendedKeyUsage", "serverAuth"),
            expected: "root certificate carries"
        ),
        RuleCase(
            rule: "an intermediate with serverAuth",
            intermediate: adding("extendedKeyUsage", "serverAuth"),
            expected: nil
        ),
        RuleCase(
            rule: "an intermediate with anyExtendedKeyUsage",
            intermediate: adding("extendedKeyUsage", "serverAuth,anyExtendedKeyUsage"),
            expected: "subordinate CA allows any"
        ),
        // RFC 5280 §4.2.1.6, BR §7.1.2.7.12, RFC 6125 §6.4.3
        RuleCase(
            rule: "no SAN",
            leaf: { $0.extensions.removeAll { $0.name == "subjectAltName" } },
            expected: "no subject alternative name"
        ),
        RuleCase(
            rule: "a critical SAN with a subject",
            leaf: replacing("subjectAltName", with: "critical,DNS:localhost"),
            expected: "critical though"
        ),
        RuleCase(
            rule: "an empty subject with a critical SAN",
            leaf: {
                $0.subject = ""
                replacing("subjectAltName", with: "critical,DNS:localhost")(&$0)
            },
            expected: nil
        ),
        RuleCase(rule: "an empty subject with a non-critical SAN", leaf: { $0.subject = "" }, expected: "not critical"),
        RuleCase(
            rule: "an underscore in a dNSName",
            leaf: replacing("subjectAltName", with: "DNS:localhost,DNS:bad_name.localhost"),
            expected: "not a valid DNS name"
        ),
        RuleCase(
            rule: "a wildcard over a public suffix",
            leaf: replacing("subjectAltName", with: "DNS:*.co.uk"),
            expected: "public suffix",
            host: "a.co.uk"
        ),
        RuleCase(
            rule: "a wildcard over a PRIVATE-section suffix (Amazon S3's own certificate)",
            leaf: replacing("subjectAltName", with: "DNS:s3.amazonaws.com,DNS:*.s3.amazonaws.com"),
            expected: nil,
            host: "bucket.s3.amazonaws.com"
        ),
        RuleCase(
            rule: "a wildcard over a multi-label ICANN suffix",
            leaf: replacing("subjectAltName", with: "DNS:*.xn--55qx5d.cn"),
            expected: "public suffix",
            host: "shop.xn--55qx5d.cn"
        ),
        RuleCase(
            rule: "a wildcard not leftmost",
            leaf: replacing("subjectAltName", with: "DNS:a.*.example.test"),
            expected: "not a valid DNS name",
            host: "a.b.example.test"
        ),
        RuleCase(
            rule: "a leftmost wildcard",
            leaf: replacing("subjectAltName", with: "DNS:*.example.test"),
            expected: nil,
            host: "a.example.test"
        ),
        // BR §7.1.4.3
        RuleCase(rule: "a CN copying a SAN", leaf: { $0.subject = "CN=localhost" }, expected: nil),
        RuleCase(rule: "a CN copying an IP SAN", leaf: { $0.subject = "CN=127.0.0.1" }, expected: nil),
        RuleCase(rule: "a CN unrelated to the SANs", leaf: { $0.subject = "CN=Sesame test server" }, expected: nil),
        RuleCase(rule: "a CN in other case", leaf: { $0.subject = "CN=LocalHost" }, expected: "not a copy"),
        RuleCase(
            rule: "a CN with another IP spelling",
            leaf: { $0.subject = "CN=127.000.000.001" },
            expected: "not a copy"
        ),
        RuleCase(
            rule: "a CN with an A-label missing from the SANs",
            leaf: { $0.subject = "CN=xn--bcher-kva.example" },
            expected: "not a copy"
        ),
        // RFC 5280 §4.2.1.10
        RuleCase(
            rule: "critical name constraints",
            intermediate: adding("nameConstraints", "critical,permitted;DNS:localhost"),
            expected: nil
        ),
        RuleCase(
            rule: "non-critical name constraints",
            intermediate: adding("nameConstraints", "permitted;DNS:localhost"),
            expected: "must be marked critical"
        ),
        RuleCase(
            rule: "name constraints in a leaf",
            leaf: adding("nameConstraints", "critical,permitted;DNS:localhost"),
            expected: "server certificate carries name constraints"
        ),
        RuleCase(
            rule: "a wildcard over an excluded subtree",
            intermediate: adding("nameConstraints", "critical,excluded;DNS:bad.example.test"),
            leaf: replacing("subjectAltName", with: "DNS:*.example.test"),
            expected: "covers the excluded name",
            host: "good.example.test"
        ),
        RuleCase(
            rule: "a wildcard over an excluded subtree several labels below it, among many",
            intermediate: adding(
                "nameConstraints",
                "critical,"
                    + (0..<300).map { "excluded;DNS:other\($0).test," }.joined()
                    + "excluded;DNS:.deep.bad.example.test"
            ),
            leaf: replacing("subjectAltName", with: "DNS:*.example.test"),
            expected: "covers the excluded name 'deep.bad.example.test'",
            host: "good.example.test"
        ),
        RuleCase(
            rule: "an excluded name that ends like a wildcard's base without a label boundary",
            intermediate: adding("nameConstraints", "critical,excluded;DNS:badexample.test"),
            leaf: replacing("subjectAltName", with: "DNS:*.example.test"),
            expected: nil,
            host: "good.example.test"
        ),
        // RFC 5280 §4.2.1.4, §4.2.1.11, §4.2.1.14
        RuleCase(
            rule: "certificate policies",
            leaf: raw("2.5.29.32", critical: false, [0x30, 0x0A] + Self.policy),
            expected: nil
        ),
        RuleCase(
            rule: "a repeated certificate policy",
            leaf: raw("2.5.29.32", critical: false, [0x30, 0x14] + Self.policy + Self.policy),
            expected: "more than once"
        ),
        RuleCase(
            rule: "critical policy constraints",
            intermediate: adding("policyConstraints", "critical,inhibitPolicyMapping:0"),
            expected: nil
        ),
        RuleCase(
            rule: "non-critical policy constraints",
            intermediate: adding("policyConstraints", "inhibitPolicyMapping:0"),
            expected: "policyConstraints is not marked critical"
        ),
        RuleCase(
            rule: "empty policy constraints",
            intermediate: raw("2.5.29.36", critical: true, [0x30, 0x00]),
            expected: "empty sequence"
        ),
        RuleCase(
            rule: "critical inhibitAnyPolicy",
            intermediate: adding("inhibitAnyPolicy", "critical,1"),
            expected: nil
        ),
        RuleCase(
            rule: "non-critical inhibitAnyPolicy",
            intermediate: adding("inhibitAnyPolicy", "1"),
            expected: "inhibitAnyPolicy is not marked critical"
        ),
        // RFC 5280 §4.2.2.1, §4.2.2.2, §4.2.1.13
        RuleCase(
            rule: "an AIA",
            leaf: adding("authorityInfoAccess", "OCSP;URI:http://ocsp.example.test"),
            expected: nil
        ),
        RuleCase(
            rule: "a critical AIA",
            leaf: adding("authorityInfoAccess", "critical,OCSP;URI:http://ocsp.example.test"),
            expected: "authority information access extension is marked critical"
        ),
        RuleCase(
            rule: "a critical SIA",
            intermediate: adding("subjectInfoAccess", "critical,caRepository;URI:http://repo.example.test"),
            expected: "subject information access extension is marked critical"
        ),
        RuleCase(
            rule: "a CRL distribution point",
            leaf: adding("crlDistributionPoints", "URI:http://crl.example.test/ca.crl"),
            expected: nil
        ),
        RuleCase(
            rule: "a CRL distribution point with only reasons",
            leaf: raw("2.5.29.31", critical: false, [0x30, 0x06, 0x30, 0x04, 0x81, 0x02, 0x06, 0x40]),
            expected: "names neither"
        ),
    ]

    static func chain(_ pki: TestPKI, _ rule: RuleCase) throws -> (chain: [Certificate], root: Certificate) {
        var rootShape = pki.caShape("CN=Rule Root,O=Sesame Test")
        rule.root(&rootShape)
        let root = try pki.issue(rootShape, issuer: nil)
        var icaShape = pki.caShape("CN=Rule Intermediate,O=Sesame Test")
        icaShape.extensions = [
            ("basicConstraints", "critical,CA:TRUE,pathlen:0"), ("keyUsage", "critical,keyCertSign,cRLSign"),
        ]
        rule.intermediate(&icaShape)
        let ica = try pki.issue(icaShape, issuer: root)
        var leafShape = pki.leafShape()
        rule.leaf(&leafShape)
        let leaf = try pki.issue(leafShape, issuer: ica)
        return ([leaf.certificate, ica.certificate], root.certificate)
    }

    @Test(arguments: cases) func rule(_ rule: RuleCase) throws {
        let (chain, root) = try Self.chain(sharedPKI, rule)
        let result = CertificateChainEvaluator.evaluate(chain: chain, roots: .anchors([root]), host: rule.host)
        if let expected = rule.expected {
            #expect(!result.isTrusted, "\(rule.rule) was trusted")
            #expect(result.failures.contains { $0.description.contains(expected) }, "\(result)")
        } else {
            #expect(result.isTrusted, "\(result)")
        }
    }
}
