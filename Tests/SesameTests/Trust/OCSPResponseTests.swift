import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Offline checks of OCSP responses through ``ServerTrust/ocspResponses``.
@Suite struct OCSPResponseTests {
    let pki = sharedPKI

    func trust(_ leaf: TestIssuedCertificate, responses: [Data]) -> ServerTrust {
        var trust = ServerTrust(
            host: "localhost",
            port: 443,
            peerChain: leaf.chain,
            isResumedSession: false,
            trustRoots: .anchors([pki.root.certificate])
        )
        trust.ocspResponses = responses
        return trust
    }

    @Test func aGoodResponseFromTheIssuerPassesAndIsReported() throws {
        let leaf = try pki.leaf()
        let result = trust(leaf, responses: [try pki.ocspResponse(for: leaf)]).evaluate()
        #expect(result.isTrusted, "\(result)")
        #expect(result.ocspStatus?.status == .good)
        #expect(result.ocspStatus?.responder.contains("Sesame Test Intermediate CA") == true)
        #expect(result.ocspStatus?.nextUpdate != nil)
    }

    @Test func aGoodResponseFromADelegatedResponderPasses() throws {
        let leaf = try pki.leaf()
        let response = try pki.ocspResponse(for: leaf, signer: try pki.ocspResponder())
        let result = trust(leaf, responses: [response]).evaluate()
        #expect(result.isTrusted, "\(result)")
        #expect(result.ocspStatus?.responder.contains("OCSP Responder") == true)
    }

    @Test func aRevokedResponseFailsWithTheRevocationTimeAndReason() throws {
        let leaf = try pki.leaf()
        let revokedAt = pki.now - 7200
        let result = trust(leaf, responses: [try pki.ocspResponse(for: leaf, answer: .revoked(at: revokedAt))])
            .evaluate()
        #expect(!result.isTrusted)
        #expect(result.contains(.revoked))
        #expect(result.description.contains("keyCompromise"), "\(result)")
        if case .revoked(let date, _) = result.ocspStatus?.status {
            #expect(abs(date.timeIntervalSince(revokedAt)) < 1)
        } else {
            Issue.record("expected a revoked status, got \(String(describing: result.ocspStatus))")
        }
    }

    @Test func responsesThatCannotBeTrustedFailClosed() throws {
        let leaf = try pki.leaf()
        let other = try pki.leaf(commonName: "other.localhost", dnsNames: ["other.localhost"])
        let cases: [(String, Data)] = [
            ("signed by the server's own key", try pki.ocspResponse(for: leaf, signer: leaf)),
            ("signed by the root, not the issuer", try pki.ocspResponse(for: leaf, signer: pki.root)),
            ("signed by a client certificate", try pki.ocspResponse(for: leaf, signer: try pki.clientCertificate())),
            ("about another certificate", try pki.ocspResponse(for: other)),
            ("stale", try pki.ocspResponse(for: leaf, thisUpdate: pki.now - 10 * 86_400, validity: 86_400)),
            ("from the future", try pki.ocspResponse(for: leaf, thisUpdate: pki.now + 3600)),
            (
                "old, without nextUpdate",
                try pki.ocspResponse(for: leaf, thisUpdate: pki.now - 8 * 86_400, validity: nil)
            ),
            ("status unknown", try pki.ocspResponse(for: leaf, answer: .unknown)),
            ("tryLater", try pki.ocspResponse(for: leaf, answer: .tryLater)),
            ("not DER", Data("not an OCSP response".utf8)),
        ]
        for (name, response) in cases {
            let result = trust(leaf, responses: [response]).evaluate()
            #expect(!result.isTrusted, "\(name) passed")
            #expect(result.contains(.invalidRevocationStatus), "\(name): \(result)")
        }
    }

    @Test func aRecentResponseWithoutNextUpdatePasses() throws {
        let leaf = try pki.leaf()
        let result = trust(leaf, responses: [try pki.ocspResponse(for: leaf, validity: nil)]).evaluate()
        #expect(result.isTrusted, "\(result)")
    }

    @Test func oneGoodResponseAmongResponsesAboutOtherCertificatesSuffices() throws {
        let leaf = try pki.leaf()
        let other = try pki.leaf(commonName: "other.localhost", dnsNames: ["other.localhost"])
        let responses = [try pki.ocspResponse(for: other), try pki.ocspResponse(for: leaf)]
        #expect(trust(leaf, responses: responses).evaluate().isTrusted)
    }

    @Test func theValidationDateAppliesToTheResponse() throws {
        let leaf = try pki.leaf()
        var evaluated = trust(leaf, responses: [try pki.ocspResponse(for: leaf, validity: 86_400)])
        evaluated.validationDate = pki.now + 3 * 86_400
        #expect(evaluated.evaluate().contains(.invalidRevocationStatus))
    }

    @Test func mustStapleIsReadFromTheTLSFeatureExtension() throws {
        #expect(try pki.leaf(mustStaple: true).certificate.requiresOCSPStaple)
        #expect(try !pki.leaf().certificate.requiresOCSPStaple)
        #expect(Certificate.tlsFeatures([0x30, 0x03, 0x02, 0x01, 0x05]) == [5])
        #expect(Certificate.tlsFeatures([0x30, 0x04, 0x02, 0x01, 0x05]).isEmpty)  // length lies
        #expect(Certificate.tlsFeatures([0x30, 0x03, 0x04, 0x01, 0x05]).isEmpty)  // not an INTEGER
    }
}
