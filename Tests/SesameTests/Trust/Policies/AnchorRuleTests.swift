import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// The anchor rule: an anchor is trusted for its name and key (RFC 5280 §6.1.1 (d)), within its
/// validity period (as Apple's platforms: an expired root is refused) and the constraints its
/// certificate states (basicConstraints, keyUsage, path length, name constraints, an extended
/// key usage that names serverAuth); the encoding rules that roots in every store break are not
/// applied to it. The path starts with a certificate the anchor issued: a CA certificate is never
/// the server's certificate, even as its own anchor; a server's own self-signed certificate may be.
@Suite struct AnchorRuleTests {
    let pki = sharedPKI

    func evaluate(_ chain: [Certificate], anchors: [Certificate], at date: Date? = nil) -> TrustEvaluationResult {
        CertificateChainEvaluator.evaluate(chain: chain, roots: .anchors(anchors), host: "localhost", at: date)
    }

    @Test func anExpiredRootIsRefused() throws {
        var shape = pki.caShape("CN=Expired Root")
        shape.notBefore = pki.now - 20 * 86_400
        shape.notAfter = pki.now - 10 * 86_400
        let root = try pki.issue(shape, issuer: nil)
        let leaf = try pki.issue(pki.leafShape(), issuer: root)
        let result = evaluate([leaf.certificate], anchors: [root.certificate])
        #expect(result.contains(.expired), "\(result)")
    }

    @Test func aCACertificateIsNeverTheServersCertificateEvenAsItsOwnAnchor() throws {
        var shape = pki.leafShape()
        shape.extensions.removeAll { $0.name == "basicConstraints" || $0.name == "keyUsage" }
        shape.extensions.append(("basicConstraints", "critical,CA:TRUE"))
        let selfSignedCA = try pki.issue(shape, issuer: nil)
        let result = evaluate([selfSignedCA.certificate], anchors: [selfSignedCA.certificate])
        #expect(!result.isTrusted)
        #expect(
            result.failures.contains { $0.message.contains("a CA certificate trusted as its own anchor") },
            "\(result)"
        )
    }

    @Test func aServersOwnSelfSignedCertificateMayBeItsAnchor() throws {
        let selfSigned = try pki.selfSignedLeaf()
        #expect(evaluate([selfSigned.certificate], anchors: [selfSigned.certificate]).isTrusted)
    }

    /// An intermediate trusted directly (a private CA's issuing CA, Let's Encrypt's R11) carries
    /// an extended key usage: it constrains, as it would in the path.
    @Test func anIntermediateAnchorsEKUConstrainsThePath() throws {
        let root = try pki.issue(pki.caShape("CN=EKU Root"), issuer: nil)
        var forServers = pki.caShape("CN=For Servers")
        forServers.extensions.append(("extendedKeyUsage", "serverAuth,clientAuth"))
        var forClients = pki.caShape("CN=For Clients")
        forClients.extensions.append(("extendedKeyUsage", "clientAuth"))
        for (shape, trusted) in [(forServers, true), (forClients, false)] {
            let ica = try pki.issue(shape, issuer: root)
            let leaf = try pki.issue(pki.leafShape(), issuer: ica)
            let result = evaluate([leaf.certificate], anchors: [ica.certificate])
            #expect(result.isTrusted == trusted, "\(result)")
        }
    }

    /// Roots in the system stores break encoding rules CAs follow today: a non-critical
    /// basicConstraints (Go Daddy Class 2), no subject key identifier (Hongkong Post Root CA 1), a
    /// SHA-1 self-signature (GlobalSign Root CA): as anchors they are trusted.
    @Test func aRootIsNotHeldToTodaysEncodingRules() throws {
        var shape = pki.caShape("CN=Old Root")
        shape.extensions = [("basicConstraints", "CA:TRUE"), ("keyUsage", "critical,keyCertSign,cRLSign")]
        shape.subjectKeyIdentifier = false
        shape.authorityKeyIdentifier = false
        shape.signatureDigest = .sha1
        shape.serial = [0x80] + Array(repeating: 0x11, count: 20)
        let root = try pki.issue(shape, issuer: nil)
        var leafShape = pki.leafShape()
        leafShape.authorityKeyIdentifier = false
        leafShape.extensions.append(("authorityKeyIdentifier", "issuer:always"))
        let leaf = try pki.issue(leafShape, issuer: root)
        let result = evaluate([leaf.certificate], anchors: [root.certificate])
        // The leaf's AKI cannot carry a key identifier the root does not have: it is refused for
        // that alone, and nothing is said about the root.
        #expect(result.failures.allSatisfy { $0.depth == 0 }, "\(result)")
    }
}
