import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Path validation beyond single certificates: validity boundaries (RFC 5280 §4.1.2.5, inclusive
/// at both ends), path building with backtracking, the caller's maximum depth, a hostile mesh, and
/// the CRL fields of §5.
@Suite struct PathValidationTests {
    let pki = sharedPKI

    func chain() throws -> (leaf: TestIssuedCertificate, ica: TestIssuedCertificate, root: TestIssuedCertificate) {
        let root = try pki.issue(pki.caShape("CN=Path Root"), issuer: nil)
        let ica = try pki.issue(pki.caShape("CN=Path Intermediate"), issuer: root)
        let leaf = try pki.issue(pki.leafShape(), issuer: ica)
        return (leaf, ica, root)
    }

    @Test func validityIsInclusiveAtBothEndsAndFractionsFallInTheirSecond() throws {
        let (leaf, ica, root) = try chain()
        func trusted(at date: Date) -> Bool {
            CertificateChainEvaluator.evaluate(
                chain: [leaf.certificate, ica.certificate],
                roots: .anchors([root.certificate]),
                host: "localhost",
                at: date
            ).isTrusted
        }
        let notBefore = leaf.certificate.notValidBefore
        let notAfter = leaf.certificate.notValidAfter
        #expect(trusted(at: notBefore))
        #expect(!trusted(at: notBefore - 1))
        #expect(trusted(at: notAfter))
        #expect(trusted(at: notAfter + 0.5))
        #expect(!trusted(at: notAfter + 1))
    }

    @Test func rfc3339ValidationTimes() throws {
        #expect(try ValidationTime.parse("2024-04-01T00:00:00Z") == Date(timeIntervalSince1970: 1_711_929_600))
        #expect(try ValidationTime.parse("2024-04-01T00:00:00.25Z") == Date(timeIntervalSince1970: 1_711_929_600.25))
        #expect(try ValidationTime.parse("2024-04-01T02:00:00+02:00") == Date(timeIntervalSince1970: 1_711_929_600))
        #expect(try ValidationTime.parse("2024-03-31 19:30:00-04:30") == Date(timeIntervalSince1970: 1_711_929_600))
        for bad in [
            "2024-04-01", "2024-04-01T00:00:00", "2024-02-30T00:00:00Z", "2024-04-01T24:00:00Z",
            "2024-04-01T00:00:00.Z", "2024-04-01T00:00:00Z trailing",
        ] {
            #expect(throws: SesameError.self, "\(bad)") { try ValidationTime.parse(bad) }
        }
    }

    /// Two certificates for one intermediate (same name and key): one issued by a root nobody
    /// trusts, sent first; one by the trusted root. The first path fails, the second is found.
    @Test func backtrackingFindsTheCrossSignedPath() throws {
        let trusted = try pki.issue(pki.caShape("CN=Trusted Root"), issuer: nil)
        let other = try pki.issue(pki.caShape("CN=Other Root"), issuer: nil)
        var shape = pki.caShape("CN=Cross Intermediate")
        let viaOther = try pki.issue(shape, issuer: other)
        shape.keyOf = viaOther
        let viaTrusted = try pki.issue(shape, issuer: trusted)
        let leaf = try pki.issue(pki.leafShape(), issuer: viaOther)
        let result = CertificateChainEvaluator.evaluate(
            chain: [leaf.certificate, viaOther.certificate, viaTrusted.certificate],
            roots: .anchors([trusted.certificate]),
            host: "localhost"
        )
        #expect(result.isTrusted, "\(result)")
        #expect(result.verifiedChain == [leaf.certificate, viaTrusted.certificate, trusted.certificate])
        #expect(result.candidatePaths.count == 2)
        #expect(result.candidatePaths.first?.failures.contains { $0.kind == .untrustedRoot } == true)
    }

    @Test func theCallersMaximumDepthCountsIntermediates() throws {
        let root = try pki.issue(pki.caShape("CN=Depth Root"), issuer: nil)
        let first = try pki.issue(pki.caShape("CN=Depth One"), issuer: root)
        let second = try pki.issue(pki.caShape("CN=Depth Two"), issuer: first)
        let leaf = try pki.issue(pki.leafShape(), issuer: second)
        func trusted(_ depth: Int) -> Bool {
            CertificateChainEvaluator.evaluate(
                chain: [leaf.certificate, second.certificate, first.certificate],
                roots: .anchors([root.certificate]),
                host: "localhost",
                maximumDepth: depth
            ).isTrusted
        }
        #expect(trusted(2))
        #expect(!trusted(1))
        #expect(!trusted(0))
    }

    /// A hostile mesh: 100 intermediates of one name and key, each signed by that key, none
    /// leading to an anchor. The search stops within its budget and reports the failure.
    @Test func aHundredCertificateMeshEndsWithinTheBudget() throws {
        let root = try pki.issue(pki.caShape("CN=Mesh Root"), issuer: nil)
        let seed = try pki.issue(pki.caShape("CN=Mesh"), issuer: nil)
        var mesh: [TestIssuedCertificate] = []
        var shape = pki.caShape("CN=Mesh")
        shape.keyOf = seed
        for _ in 0..<100 { mesh.append(try pki.issue(shape, issuer: seed)) }
        let leaf = try pki.issue(pki.leafShape(), issuer: seed)
        let result = CertificateChainEvaluator.evaluate(
            chain: [leaf.certificate] + mesh.map(\.certificate),
            roots: .anchors([root.certificate]),
            host: "localhost"
        )
        #expect(!result.isTrusted)
        #expect(result.candidatePaths.count <= CertificateChainEvaluator.pathBudget)
    }

    /// RFC 5280 §4.1.2.8 allows unique identifiers in version 2 and 3; the Baseline Requirements
    /// forbid them.
    @Test func uniqueIdentifiersAreRefused() throws {
        let (leaf, ica, root) = try chain()
        let withID = try pki.addingSubjectUniqueID(to: leaf, issuer: ica)
        let result = CertificateChainEvaluator.evaluate(
            chain: [withID, ica.certificate],
            roots: .anchors([root.certificate]),
            host: "localhost"
        )
        #expect(result.failures.map(\.description).contains { $0.contains("unique identifier") }, "\(result)")
        #expect(result.failures.count == 1, "\(result)")
    }

    @Test func crlFieldsRequiredByRFC5280() throws {
        let (leaf, ica, root) = try chain()
        func evaluate(_ crls: [Data]) throws -> TrustEvaluationResult {
            CertificateChainEvaluator.evaluate(
                chain: [leaf.certificate, ica.certificate],
                roots: .anchors([root.certificate]),
                host: "localhost",
                crls: try crls.map { try CertificateRevocationList($0) }
            )
        }
        let fromRoot = try pki.crl(issuer: root)
        #expect(try evaluate([fromRoot, try pki.crl(issuer: ica)]).isTrusted)
        var hex = leaf.certificate.serialNumber
        if hex.count % 2 == 1 { hex = "0" + hex }
        let serial = stride(from: 0, to: hex.count, by: 2).map { offset -> UInt8 in
            let start = hex.index(hex.startIndex, offsetBy: offset)
            return UInt8(hex[start..<hex.index(start, offsetBy: 2)], radix: 16) ?? 0
        }
        let revoked = try evaluate([fromRoot, try pki.crl(issuer: ica, revoked: [serial])])
        #expect(revoked.contains(.revoked), "\(revoked)")
        for (crl, expected) in [
            (try pki.crl(issuer: ica, crlNumber: false), "has no CRL number"),
            (try pki.crl(issuer: ica, authorityKeyIdentifier: false), "has no authority key identifier"),
            (try pki.crl(issuer: ica, nextUpdate: false), "has no nextUpdate"),
            (try pki.crl(issuer: ica, criticalCRLNumber: true), "marks its CRL number critical"),
        ] {
            let result = try evaluate([fromRoot, crl])
            #expect(!result.isTrusted)
            #expect(result.failures.contains { $0.description.contains(expected) }, "\(result)")
        }
    }
}
