import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// `ServerTrust.evaluate()`: every failure reason the test PKI can produce, anchors, validation
/// time, and the pins in the result.
@Suite struct ServerTrustTests {
    let pki = sharedPKI

    func trust(_ certificate: TestIssuedCertificate, host: String = "localhost") -> ServerTrust {
        var trust = ServerTrust(
            host: host,
            port: 443,
            peerChain: certificate.chain,
            isResumedSession: false,
            trustRoots: .anchors([pki.root.certificate])
        )
        trust.validationDate = pki.now
        return trust
    }

    @Test func everyReasonIsReported() throws {
        let cases: [(TestIssuedCertificate, String, TrustFailureReason.Kind)] = [
            (try pki.expiredLeaf(), "localhost", .expired),
            (try pki.notYetValidLeaf(), "localhost", .notYetValid),
            (try pki.wrongHostLeaf(), "localhost", .hostnameMismatch),
            (try pki.untrustedLeaf(), "localhost", .untrustedRoot),
            (try pki.selfSignedLeaf(), "localhost", .selfSigned),
            (try pki.leaf(), "127.0.0.2", .hostnameMismatch),
        ]
        for (certificate, host, kind) in cases {
            let result = trust(certificate, host: host).evaluate()
            #expect(!result.isTrusted)
            #expect(result.contains(kind), "\(kind): \(result)")
        }
        // Expired and for the wrong host: both reasons, not just the first.
        let both = trust(
            try pki.leaf(dnsNames: ["other.test"], ipAddresses: [], validUntil: pki.now - 60),
            host: "localhost"
        )
        .evaluate()
        #expect(both.contains(.expired) && both.contains(.hostnameMismatch), "\(both)")
    }

    @Test func anchorsValidationTimeAndPins() throws {
        let leaf = try pki.leaf()
        var trust = trust(leaf)
        let result = trust.evaluate()
        #expect(result.isTrusted)
        #expect(result.observedChain == leaf.chain)
        #expect(result.pins == result.verifiedChain.map { "sha256/" + $0.publicKey.sha256Pin })
        #expect(result.pins.count == 3)
        // Years later the same chain has expired.
        trust.validationDate = pki.now + 10 * 365 * 86_400
        #expect(trust.evaluate().contains(.expired))
        // Anchored at the intermediate alone it validates; at an unrelated root it does not.
        trust.validationDate = pki.now
        #expect(trust.settingAnchors([pki.intermediate.certificate]).evaluate().isTrusted)
        #expect(!trust.settingAnchors([pki.untrustedRoot.certificate]).evaluate().isTrusted)
        // Without the host check, a wrong-host leaf validates.
        var anyHost = self.trust(try pki.wrongHostLeaf())
        anyHost.validatesHost = false
        #expect(anyHost.evaluate().isTrusted)
    }
}
