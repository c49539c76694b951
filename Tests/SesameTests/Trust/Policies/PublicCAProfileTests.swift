import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Chains in the profiles today's public CAs issue, built from their published certificate
/// profiles (root, intermediate and subscriber fields, cross-signs, policies, key types): each
/// must be trusted, however the server orders what it sends and whichever of their roots is the
/// anchor. A rule that refuses one of these would refuse a large part of the web.
@Suite struct PublicCAProfileTests {
    /// certificatePolicies: the Forum's DV policy, and an issuer's policy with a CPS pointer.
    static func policies(_ oids: [[UInt8]], cps: Bool = false) -> [UInt8] {
        var body: [UInt8] = []
        for (index, oid) in oids.enumerated() {
            var information = [0x06, UInt8(oid.count)] + oid
            if cps && index == 0 {
                let uri = Array("https://cps.example.test".utf8)
                let qualifier: [UInt8] =
                    [0x06, 0x08, 0x2B, 0x06, 0x01, 0x05, 0x05, 0x07, 0x02, 0x01, 0x16, UInt8(uri.count)] + uri
                information += [0x30, UInt8(qualifier.count + 2), 0x30, UInt8(qualifier.count)] + qualifier
            }
            body += [0x30, UInt8(information.count)] + information
        }
        return [0x30, UInt8(body.count)] + body
    }
    static let domainValidated: [UInt8] = [0x67, 0x81, 0x0C, 0x01, 0x02, 0x01]  // 2.23.140.1.2.1
    static let organizationValidated: [UInt8] = [0x67, 0x81, 0x0C, 0x01, 0x02, 0x02]  // 2.23.140.1.2.2
    static let anyPolicy: [UInt8] = [0x55, 0x1D, 0x20, 0x00]  // 2.5.29.32.0
    /// 1.3.6.1.4.1.6449.1.2.2.7, Sectigo's domain-validated policy.
    static let sectigoDV: [UInt8] = [0x2B, 0x06, 0x01, 0x04, 0x01, 0xB2, 0x31, 0x01, 0x02, 0x02, 0x07]
    /// An empty signed certificate timestamp list (RFC 6962 §3.3), as every public leaf carries one.
    static let sctList: (oid: String, critical: Bool, value: [UInt8]) = (
        "1.3.6.1.4.1.11129.2.4.2", false, [0x04, 0x02, 0x00, 0x00]
    )

    static let pki: TestPKI = {
        try! TestPKI()  // safe: nothing can be tested without it
    }()

    static func root(
        _ subject: String,
        key: TestPKI.KeyType,
        digest: TestPKI.SignatureDigest = .sha256
    ) throws
        -> TestIssuedCertificate
    {
        var shape = pki.caShape(subject)
        shape.key = key
        shape.signatureDigest = digest
        shape.authorityKeyIdentifier = false
        return try pki.issue(shape, issuer: nil)
    }

    /// The same CA (subject and key) certified by another root: a cross-sign.
    static func crossSign(_ ca: TestIssuedCertificate, by issuer: TestIssuedCertificate) throws -> TestIssuedCertificate
    {
        var shape = pki.caShape(ca.certificate.subject.description)
        shape.keyOf = ca
        shape.extensions += [("authorityInfoAccess", "caIssuers;URI:http://crt.example.test/root.der")]
        shape.rawExtensions = [("2.5.29.32", false, policies([anyPolicy]))]
        return try pki.issue(shape, issuer: issuer)
    }

    static func intermediate(
        _ subject: String,
        key: TestPKI.KeyType,
        issuer: TestIssuedCertificate,
        policyOIDs: [[UInt8]] = [domainValidated]
    ) throws -> TestIssuedCertificate {
        var shape = pki.caShape(subject)
        shape.key = key
        shape.extensions = [
            ("basicConstraints", "critical,CA:TRUE,pathlen:0"),
            ("keyUsage", "critical,digitalSignature,keyCertSign,cRLSign"),
            ("extendedKeyUsage", "serverAuth,clientAuth"),
            ("authorityInfoAccess", "caIssuers;URI:http://crt.example.test/issuer.der"),
            ("crlDistributionPoints", "URI:http://crl.example.test/issuer.crl"),
        ]
        shape.rawExtensions = [("2.5.29.32", false, policies(policyOIDs))]
        return try pki.issue(shape, issuer: issuer)
    }

    static func leaf(
        names: [String],
        key: TestPKI.KeyType,
        issuer: TestIssuedCertificate,
        eku: String = "serverAuth,clientAuth",
        subject: String? = nil,
        policyOIDs: [[UInt8]] = [domainValidated],
        cps: Bool = false
    ) throws -> TestIssuedCertificate {
        var shape = pki.leafShape(subject ?? "CN=\(names[0])")
        shape.key = key
        let usage = key == .rsa2048 ? "critical,digitalSignature,keyEncipherment" : "critical,digitalSignature"
        shape.extensions = [
            ("basicConstraints", "critical,CA:FALSE"), ("keyUsage", usage), ("extendedKeyUsage", eku),
            // An empty subject makes the SAN critical (RFC 5280 §4.2.1.6), as Google's leaves do.
            ("subjectAltName", (subject == "" ? "critical," : "") + names.map { "DNS:\($0)" }.joined(separator: ",")),
            ("authorityInfoAccess", "OCSP;URI:http://ocsp.example.test,caIssuers;URI:http://crt.example.test/i.der"),
        ]
        shape.rawExtensions = [("2.5.29.32", false, policies(policyOIDs, cps: cps)), sctList]
        return try pki.issue(shape, issuer: issuer)
    }

    struct Published: Sendable, CustomTestStringConvertible {
        let name: String
        let chain: [Certificate]
        let anchors: [Certificate]
        let host: String
        var testDescription: String { name }
    }

    static let chains: [Published] = {
        do {
            var chains: [Published] = []
            // Let's Encrypt: ISRG Root X1 (RSA 4096) → R11 → an RSA leaf.
            let isrgX1 = try root("CN=ISRG Root X1,O=Internet Security Research Group,C=US", key: .rsa4096)
            let r11 = try intermediate("CN=R11,O=Let's Encrypt,C=US", key: .rsa2048, issuer: isrgX1)
            let rsaLeaf = try leaf(names: ["example.test", "www.example.test"], key: .rsa2048, issuer: r11)
            chains.append(
                .init(
                    name: "Let's Encrypt RSA",
                    chain: [rsaLeaf.certificate, r11.certificate],
                    anchors: [isrgX1.certificate],
                    host: "www.example.test"
                )
            )
            // ISRG Root X2 (P-384), self-signed and cross-signed by X1 → E6 → an ECDSA leaf; the
            // server sends the cross-sign, and a client may trust either root.
            let isrgX2 = try root("CN=ISRG Root X2,O=Internet Security Research Group,C=US", key: .ecdsaP384)
            let x2ByX1 = try crossSign(isrgX2, by: isrgX1)
            let e6 = try intermediate("CN=E6,O=Let's Encrypt,C=US", key: .ecdsaP384, issuer: isrgX2)
            let ecLeaf = try leaf(names: ["example.test"], key: .ecdsaP256, issuer: e6, eku: "serverAuth")
            let sent = [ecLeaf.certificate, e6.certificate, x2ByX1.certificate]
            chains.append(
                .init(
                    name: "Let's Encrypt ECDSA to X1 through the cross-sign",
                    chain: sent,
                    anchors: [isrgX1.certificate],
                    host: "example.test"
                )
            )
            chains.append(
                .init(
                    name: "Let's Encrypt ECDSA to X2",
                    chain: sent,
                    anchors: [isrgX2.certificate],
                    host: "example.test"
                )
            )
            chains.append(
                .init(
                    name: "Let's Encrypt ECDSA, both roots",
                    chain: sent,
                    anchors: [isrgX1.certificate, isrgX2.certificate],
                    host: "example.test"
                )
            )
            // Amazon: Amazon Root CA 1 → Amazon RSA 2048 M01 → S3's own wildcard over a
            // PRIVATE-section public suffix.
            let amazon = try root("CN=Amazon Root CA 1,O=Amazon,C=US", key: .rsa2048)
            let m01 = try intermediate("CN=Amazon RSA 2048 M01,O=Amazon,C=US", key: .rsa2048, issuer: amazon)
            let s3 = try leaf(names: ["s3.amazonaws.com", "*.s3.amazonaws.com"], key: .rsa2048, issuer: m01)
            chains.append(
                .init(
                    name: "Amazon (S3)",
                    chain: [s3.certificate, m01.certificate],
                    anchors: [amazon.certificate],
                    host: "bucket.s3.amazonaws.com"
                )
            )
            // Google Trust Services: GlobalSign Root CA (self-signed with SHA-1) cross-signs GTS
            // Root R1 → WR2 → an ECDSA leaf with no common name.
            let globalSign = try root(
                "CN=GlobalSign Root CA,OU=Root CA,O=GlobalSign nv-sa,C=BE",
                key: .rsa2048,
                digest: .sha1
            )
            let gtsR1 = try root("CN=GTS Root R1,O=Google Trust Services LLC,C=US", key: .rsa4096)
            let r1ByGlobalSign = try crossSign(gtsR1, by: globalSign)
            let wr2 = try intermediate("CN=WR2,O=Google Trust Services,C=US", key: .rsa2048, issuer: gtsR1)
            let google = try leaf(
                names: ["*.google.test", "google.test"],
                key: .ecdsaP256,
                issuer: wr2,
                eku: "serverAuth",
                subject: ""
            )
            let googleSent = [google.certificate, wr2.certificate, r1ByGlobalSign.certificate]
            chains.append(
                .init(
                    name: "Google Trust Services to GlobalSign",
                    chain: googleSent,
                    anchors: [globalSign.certificate],
                    host: "mail.google.test"
                )
            )
            chains.append(
                .init(
                    name: "Google Trust Services to GTS Root R1",
                    chain: googleSent,
                    anchors: [gtsR1.certificate],
                    host: "google.test"
                )
            )
            // DigiCert: Global Root G2 → an OV intermediate naming several policies → an OV leaf
            // with a CPS pointer.
            let digicert = try root("CN=DigiCert Global Root G2,OU=www.digicert.com,O=DigiCert Inc,C=US", key: .rsa2048)
            let digicertCA = try intermediate(
                "CN=DigiCert Global G2 TLS RSA SHA256 2020 CA1,O=DigiCert Inc,C=US",
                key: .rsa2048,
                issuer: digicert,
                policyOIDs: [domainValidated, organizationValidated]
            )
            let ov = try leaf(
                names: ["shop.example.test"],
                key: .rsa2048,
                issuer: digicertCA,
                subject: "CN=shop.example.test,O=Example Shop,L=Springfield,ST=Oregon,C=US",
                policyOIDs: [organizationValidated],
                cps: true
            )
            chains.append(
                .init(
                    name: "DigiCert OV",
                    chain: [ov.certificate, digicertCA.certificate],
                    anchors: [digicert.certificate],
                    host: "shop.example.test"
                )
            )
            // Sectigo: AAA Certificate Services (SHA-1) cross-signs USERTrust RSA → an
            // intermediate with anyPolicy → a leaf with Sectigo's policy and the Forum's.
            let aaa = try root(
                "CN=AAA Certificate Services,O=Comodo CA Limited,L=Salford,C=GB",
                key: .rsa2048,
                digest: .sha1
            )
            let userTrust = try root(
                "CN=USERTrust RSA Certification Authority,O=The USERTRUST Network,C=US",
                key: .rsa4096
            )
            let userTrustByAAA = try crossSign(userTrust, by: aaa)
            let sectigoCA = try intermediate(
                "CN=Sectigo RSA Domain Validation Secure Server CA,O=Sectigo Limited,C=GB",
                key: .rsa2048,
                issuer: userTrust,
                policyOIDs: [anyPolicy, domainValidated]
            )
            let dv = try leaf(
                names: ["dv.example.test"],
                key: .rsa2048,
                issuer: sectigoCA,
                policyOIDs: [sectigoDV, domainValidated],
                cps: true
            )
            let sectigoSent = [dv.certificate, sectigoCA.certificate, userTrustByAAA.certificate]
            chains.append(
                .init(
                    name: "Sectigo to AAA Certificate Services",
                    chain: sectigoSent,
                    anchors: [aaa.certificate],
                    host: "dv.example.test"
                )
            )
            chains.append(
                .init(
                    name: "Sectigo to USERTrust",
                    chain: sectigoSent,
                    anchors: [userTrust.certificate],
                    host: "dv.example.test"
                )
            )
            return chains
        } catch {
            fatalError("the public CA profiles could not be built: \(error)")  // safe: a test fixture
        }
    }()

    @Test(arguments: chains)
    func aChainInAPublicCAsProfileIsTrusted(_ published: Published) {
        for chain in [published.chain, [published.chain[0]] + published.chain.dropFirst().reversed()] {
            let result = CertificateChainEvaluator.evaluate(
                chain: chain,
                roots: .anchors(published.anchors),
                host: published.host
            )
            #expect(result.isTrusted, "\(published.name): \(result)")
        }
    }
}
