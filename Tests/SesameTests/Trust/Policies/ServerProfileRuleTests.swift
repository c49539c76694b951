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
    /// certificatePolicies: 2.23.140.1.2.1 with a qualifier 1.3.6.1.4.1.55738.1 (UTF8String "x").
    static let policyWithUnknownQualifier: [UInt8] = [
        0x30, 0x1C, 0x30, 0x1A, 0x06, 0x06, 0x67, 0x81, 0x0C, 0x01, 0x02, 0x01, 0x30, 0x10, 0x30, 0x0E, 0x06, 0x09,
        0x2B, 0x06, 0x01, 0x04, 0x01, 0x83, 0xB3, 0x3A, 0x01, 0x0C, 0x01, 0x78,
    ]
    /// certificatePolicies: 2.23.140.1.2.1 with a CPS pointer (id-qt-cps, "http://x").
    static let policyWithCPS: [UInt8] = [
        0x30, 0x22, 0x30, 0x20, 0x06, 0x06, 0x67, 0x81, 0x0C, 0x01, 0x02, 0x01, 0x30, 0x16, 0x30, 0x14, 0x06, 0x08,
        0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x02, 0x01, 0x16, 0x08, 0x68, 0x74, 0x74, 0x70, 0x3A, 0x2F, 0x2F, 0x78,
    ]

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
        // BR §7.1.3.2
        RuleCase(rule: "a leaf signed with SHA-1", leaf: { $0.signatureDigest = .sha1 }, expected: "(SHA-1)"),
        RuleCase(
            rule: "an intermediate signed with SHA-1",
            intermediate: { $0.signatureDigest = .sha1 },
            expected: "(SHA-1)"
        ),
        RuleCase(
            rule: "a root self-signed with SHA-1 (its signature is not what trusts it)",
            root: { $0.signatureDigest = .sha1 },
            expected: nil
        ),
        RuleCase(
            rule: "SHA-384 and SHA-512",
            intermediate: { $0.signatureDigest = .sha384 },
            leaf: { $0.signatureDigest = .sha512 },
            expected: nil
        ),
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
            rule: "a root whose AKI carries its own key identifier",
            root: { $0.authorityKeyIdentifier = true },
            expected: nil
        ),
        RuleCase(
            rule: "a root whose AKI has no keyIdentifier",
            root: {
                $0.authorityKeyIdentifier = false
                $0.extensions.append(("authorityKeyIdentifier", "issuer:always"))
            },
            expected: "has no keyIdentifier"
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
            rule: "a leaf's path length without cA (binds its CA; path validation never reads it)",
            leaf: replacing("basicConstraints", with: "critical,CA:FALSE,pathlen:0"),
            expected: nil
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
            rule: "an EC leaf that asserts keyEncipherment (cert-manager's default usages)",
            leaf: replacing("keyUsage", with: "critical,digitalSignature,keyEncipherment"),
            expected: nil
        ),
        RuleCase(
            rule: "an RSA leaf for signatures and key transport",
            leaf: {
                $0.key = .rsa2048
                replacing("keyUsage", with: "critical,digitalSignature,keyEncipherment")(&$0)
            },
            expected: nil
        ),
        RuleCase(
            rule: "an RSA leaf for key transport only (TLS 1.2 RSA key exchange)",
            leaf: {
                $0.key = .rsa2048
                replacing("keyUsage", with: "critical,keyEncipherment")(&$0)
            },
            expected: nil
        ),
        RuleCase(
            rule: "an EC leaf for key transport only",
            leaf: replacing("keyUsage", with: "critical,keyEncipherment"),
            expected: "permits no use TLS makes"
        ),
        RuleCase(
            rule: "an RSA leaf for key agreement only",
            leaf: {
                $0.key = .rsa2048
                replacing("keyUsage", with: "critical,keyAgreement")(&$0)
            },
            expected: "permits no use TLS makes"
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
            expected: "also allows anyExtendedKeyUsage"
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
            rule: "a leaf without an EKU",
            leaf: { $0.extensions.removeAll { $0.name == "extendedKeyUsage" } },
            expected: "has no extended key usage"
        ),
        RuleCase(
            rule: "a leaf with a critical EKU",
            leaf: replacing("extendedKeyUsage", with: "critical,serverAuth"),
            expected: "extended key usage is marked critical"
        ),
        RuleCase(
            rule: "a leaf for serverAuth and clientAuth",
            leaf: replacing("extendedKeyUsage", with: "serverAuth,clientAuth"),
            expected: nil
        ),
        RuleCase(
            rule: "a leaf for serverAuth and codeSigning",
            leaf: replacing("extendedKeyUsage", with: "serverAuth,codeSigning"),
            expected: "also allows codeSigning"
        ),
        RuleCase(
            rule: "a leaf for serverAuth and OCSPSigning",
            leaf: replacing("extendedKeyUsage", with: "serverAuth,OCSPSigning"),
            expected: "also allows OCSPSigning"
        ),
        RuleCase(
            rule: "a leaf for serverAuth and a purpose the Forum leaves open",
            leaf: replacing("extendedKeyUsage", with: "serverAuth,1.3.6.1.4.1.55738.1"),
            expected: nil
        ),
        RuleCase(
            rule: "an intermediate for clientAuth only",
            intermediate: adding("extendedKeyUsage", "clientAuth"),
            expected: "does not name serverAuth"
        ),
        RuleCase(
            rule: "an intermediate for Netscape Server Gated Crypto only",
            intermediate: adding("extendedKeyUsage", "nsSGC"),
            expected: "does not name serverAuth"
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
        RuleCase(rule: "a CN that names no host", leaf: { $0.subject = "CN=Sesame test server" }, expected: nil),
        RuleCase(
            rule: "a CN that names something the SANs do not (as Kubernetes' kube-apiserver)",
            leaf: { $0.subject = "CN=kube-apiserver" },
            expected: nil
        ),
        RuleCase(rule: "a CN in other case", leaf: { $0.subject = "CN=LocalHost" }, expected: "not a copy"),
        RuleCase(
            rule: "a CN naming a host the SANs do not (as x509-limbo's valid leaves)",
            leaf: { $0.subject = "CN=example.com" },
            expected: nil
        ),
        RuleCase(
            rule: "a CN copying a wildcard SAN",
            leaf: { shape in
                shape.subject = "CN=*.example.test"
                replacing("subjectAltName", with: "DNS:*.example.test")(&shape)
            },
            expected: nil,
            host: "a.example.test"
        ),
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
            rule: "non-critical name constraints (the Forum allows them)",
            intermediate: adding(
                "nameConstraints",
                "permitted;DNS:localhost,permitted;IP:127.0.0.1/255.255.255.255,permitted;IP:::1/ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"
            ),
            expected: nil
        ),
        RuleCase(
            rule: "a name constraint that is not a DNS name",
            intermediate: adding("nameConstraints", "critical,permitted;DNS:.localhost"),
            expected: "is not a DNS name"
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
                    + "excluded;DNS:deep.bad.example.test"
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
            rule: "a critical certificatePolicies with a qualifier RFC 5280 does not define",
            leaf: raw("2.5.29.32", critical: true, Self.policyWithUnknownQualifier),
            expected: "cannot be processed"
        ),
        RuleCase(
            rule: "a non-critical certificatePolicies with a qualifier RFC 5280 does not define",
            leaf: raw("2.5.29.32", critical: false, Self.policyWithUnknownQualifier),
            expected: nil
        ),
        RuleCase(
            rule: "a critical certificatePolicies with a CPS pointer",
            leaf: raw("2.5.29.32", critical: true, Self.policyWithCPS),
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
            rule: "non-critical policy constraints (processed all the same)",
            intermediate: adding("policyConstraints", "inhibitPolicyMapping:0"),
            expected: nil
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
            rule: "non-critical inhibitAnyPolicy (processed all the same)",
            intermediate: adding("inhibitAnyPolicy", "1"),
            expected: nil
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
        // No common name unless a rule sets one: its SANs change from rule to rule.
        var leafShape = pki.leafShape("O=Sesame Test")
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
