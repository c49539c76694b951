import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// CRLs as RFC 5280 §5 and §6.3 define them: every CRL of a PEM file, clear errors for what is
/// not one, no CRL needed for the anchor, delta CRLs, a CRL signed by a separate CRL-signing key
/// of the CA, and "revoked" reported whenever a usable CRL says so.
@Suite struct RevocationListTests {
    let pki = sharedPKI

    func chain() throws -> (leaf: TestIssuedCertificate, ica: TestIssuedCertificate, root: TestIssuedCertificate) {
        let root = try pki.issue(pki.caShape("CN=CRL Root"), issuer: nil)
        let ica = try pki.issue(pki.caShape("CN=CRL Intermediate"), issuer: root)
        let leaf = try pki.issue(pki.leafShape(), issuer: ica)
        return (leaf, ica, root)
    }

    static func serial(of certificate: Certificate) -> [UInt8] {
        var hex = certificate.serialNumber
        if hex.count % 2 == 1 { hex = "0" + hex }
        return stride(from: 0, to: hex.count, by: 2).map { offset -> UInt8 in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16) ?? 0
        }
    }

    static func pem(_ der: Data, label: String = "X509 CRL") -> String {
        let base64 = der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN \(label)-----\n\(base64)\n-----END \(label)-----\n"
    }

    func evaluate(
        _ leaf: TestIssuedCertificate,
        _ intermediates: [TestIssuedCertificate],
        root: TestIssuedCertificate,
        crls: [CertificateRevocationList]
    ) -> TrustEvaluationResult {
        CertificateChainEvaluator.evaluate(
            chain: [leaf.certificate] + intermediates.map(\.certificate),
            roots: .anchors([root.certificate]),
            host: "localhost",
            crls: crls
        )
    }

    @Test func everyCRLOfAPEMFileIsRead() throws {
        let (leaf, ica, root) = try chain()
        let path = try ScratchFolder.make("crl-hierarchy").appendingPathComponent("hierarchy.crl").path
        let text =
            "# the hierarchy's CRLs\n" + Self.pem(try pki.crl(issuer: root))
            + Self.pem(try pki.crl(issuer: ica, revoked: [Self.serial(of: leaf.certificate)]))
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let crls = try CertificateRevocationList.load(contentsOf: path)
        #expect(crls.count == 2)
        let result = evaluate(leaf, [ica], root: root, crls: crls)
        #expect(result.contains(.revoked), "\(result)")
        #expect(!result.failures.contains { $0.openSSLCode == 3 }, "no 'unable to get certificate CRL': \(result)")
    }

    @Test func whatIsNotACRLIsNamedWithItsPosition() throws {
        let (_, ica, root) = try chain()
        let crl = try pki.crl(issuer: root)
        let cases: [(Data, String)] = [
            (Data((Self.pem(crl) + ica.certificatePEM).utf8), "PEM block 2 is a CERTIFICATE, not an X509 CRL"),
            (
                Data((Self.pem(crl) + "-----BEGIN X509 CRL-----\nnot base64!\n-----END X509 CRL-----\n").utf8),
                "PEM block 2"
            ),
            (Data(Self.pem(Data([0x30, 0x03, 0x02, 0x01, 0x01])).utf8), "PEM block 1 does not parse as a CRL"),
            (crl + Data([0x00, 0x01]), "2 bytes follow the DER CRL"),
            (Data(), "holds no CRL"),
            (Data("just text\n".utf8), "not a CRL"),
        ]
        for (bytes, expected) in cases {
            do {
                _ = try CertificateRevocationList.parseAll(bytes, source: "'f'")
                Issue.record("accepted: \(expected)")
            } catch {
                #expect("\(error)".contains(expected) && "\(error)".contains("'f'"), "\(error)")
            }
        }
        let two = Data((Self.pem(crl) + Self.pem(try pki.crl(issuer: ica))).utf8)
        #expect(try CertificateRevocationList.parseAll(two).count == 2)
        #expect(throws: SesameError.self) { try CertificateRevocationList(two) }
    }

    /// RFC 5280 §6.3 checks what the anchor's key vouches for, not the anchor: with CRL checking
    /// on, an intermediate trusted directly needs no CRL from its issuer, as the server profile's
    /// CRL rules already say; the certificates below it still need theirs.
    @Test func theAnchorNeedsNoCRL() throws {
        let (leaf, ica, _) = try chain()
        let fromIntermediate = try CertificateRevocationList(try pki.crl(issuer: ica))
        let anchored = CertificateChainEvaluator.evaluate(
            chain: [leaf.certificate],
            roots: .anchors([ica.certificate]),
            host: "localhost",
            crls: [fromIntermediate]
        )
        #expect(anchored.isTrusted, "\(anchored)")
        let second = try pki.issue(pki.caShape("CN=CRL Second"), issuer: ica)
        let deeper = try pki.issue(pki.leafShape(), issuer: second)
        let missing = CertificateChainEvaluator.evaluate(
            chain: [deeper.certificate, second.certificate],
            roots: .anchors([ica.certificate]),
            host: "localhost",
            crls: [try CertificateRevocationList(pki.crl(issuer: second))]
        )
        #expect(missing.failures.contains { $0.message.contains("unable to get certificate CRL") }, "\(missing)")
    }

    @Test func aDeltaCRLRevokes() throws {
        let (leaf, ica, root) = try chain()
        let base = try CertificateRevocationList(try pki.crl(issuer: ica, number: 10, announcesDeltas: true))
        let delta = try CertificateRevocationList(
            try pki.crl(issuer: ica, revoked: [Self.serial(of: leaf.certificate)], number: 11, deltaOf: 10)
        )
        let fromRoot = try CertificateRevocationList(try pki.crl(issuer: root))
        #expect(evaluate(leaf, [ica], root: root, crls: [fromRoot, base]).isTrusted)
        let revoked = evaluate(leaf, [ica], root: root, crls: [fromRoot, base, delta])
        #expect(revoked.contains(.revoked), "\(revoked)")
    }

    /// RFC 5280 §6.3.3 (f): a CA may sign its CRLs with another key, certified by the same
    /// anchor under the CA's name with cRLSign.
    @Test func aCRLSignedByASeparateKeyOfTheCA() throws {
        let root = try pki.issue(pki.caShape("CN=Split Root"), issuer: nil)
        var caShape = pki.caShape("CN=Split CA")
        caShape.extensions = [("basicConstraints", "critical,CA:TRUE"), ("keyUsage", "critical,keyCertSign")]
        let ca = try pki.issue(caShape, issuer: root)
        var signerShape = pki.caShape("CN=Split CA")
        signerShape.extensions = [("basicConstraints", "critical,CA:FALSE"), ("keyUsage", "critical,cRLSign")]
        let signer = try pki.issue(signerShape, issuer: root)
        let leaf = try pki.issue(pki.leafShape(), issuer: ca)
        let fromRoot = try CertificateRevocationList(try pki.crl(issuer: root))
        let good = try CertificateRevocationList(try pki.crl(issuer: ca, signer: signer))
        let trusted = evaluate(leaf, [ca, signer], root: root, crls: [fromRoot, good])
        #expect(trusted.isTrusted, "\(trusted)")
        let revoking = try CertificateRevocationList(
            try pki.crl(issuer: ca, signer: signer, revoked: [Self.serial(of: leaf.certificate)])
        )
        let revoked = evaluate(leaf, [ca, signer], root: root, crls: [fromRoot, revoking])
        #expect(revoked.contains(.revoked), "\(revoked)")
    }
}
