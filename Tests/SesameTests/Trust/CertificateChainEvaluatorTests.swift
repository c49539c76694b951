import Foundation
import SesameTesting
import Testing

@testable import Sesame

@Suite struct CertificateChainEvaluatorTests {
    static let pki: TestPKI = {
        try! TestPKI(now: TestPKI.referenceDate)  // safe: as sharedPKI
    }()
    var pki: TestPKI { Self.pki }
    var anchors: TrustRoots { .anchors([pki.root.certificate]) }
    let at = TestPKI.referenceDate

    func evaluate(
        _ issued: TestIssuedCertificate,
        host: String? = "localhost",
        roots: TrustRoots? = nil
    ) -> TrustEvaluationResult {
        CertificateChainEvaluator.evaluate(chain: issued.chain, roots: roots ?? anchors, host: host, at: at)
    }

    @Test func aValidChainIsTrustedAndBuiltToTheRoot() throws {
        let result = evaluate(try pki.leaf())
        #expect(result.isTrusted, "\(result)")
        #expect(result.verifiedChain.count == 3)
        #expect(result.verifiedChain.last == pki.root.certificate)
    }

    @Test(arguments: [
        ("expired", TrustFailureReason.Kind.expired), ("future", .notYetValid), ("wrong host", .hostnameMismatch),
        ("untrusted", .untrustedRoot), ("self-signed", .selfSigned),
    ])
    func eachFailureIsNamed(kind: String, expected: TrustFailureReason.Kind) throws {
        let issued: TestIssuedCertificate
        switch kind {
        case "expired": issued = try pki.expiredLeaf()
        case "future": issued = try pki.notYetValidLeaf()
        case "wrong host": issued = try pki.wrongHostLeaf()
        case "untrusted": issued = try pki.untrustedLeaf()
        default: issued = try pki.selfSignedLeaf()
        }
        let result = evaluate(issued)
        #expect(!result.isTrusted)
        #expect(result.contains(expected), "\(result)")
        #expect(result.failures.first { $0.kind == expected }?.message.isEmpty == false)
    }

    @Test func severalFailuresAreAllReported() throws {
        let result = evaluate(try pki.expiredLeaf(), host: "other.example")
        #expect(result.contains(.expired))
        #expect(result.contains(.hostnameMismatch))
    }

    @Test func theValidationTimeIsHonoured() throws {
        let leaf = try pki.leaf()
        let later = CertificateChainEvaluator.evaluate(
            chain: leaf.chain,
            roots: anchors,
            host: "localhost",
            at: at + 500 * 86_400
        )
        #expect(later.contains(.expired))
        let earlier = CertificateChainEvaluator.evaluate(
            chain: leaf.chain,
            roots: anchors,
            host: "localhost",
            at: at - 10 * 86_400
        )
        #expect(earlier.contains(.notYetValid))
    }

    @Test(arguments: ["127.0.0.1", "::1", "[::1]", "localhost", "LOCALHOST", "localhost."])
    func hostsAndIPAddressesMatch(host: String) throws {
        #expect(evaluate(try pki.leaf(), host: host).isTrusted)
    }

    @Test func ipAddressesMatchOnlyIPSANs() throws {
        // A DNS SAN spelled like an IP address must not satisfy an IP host.
        let leaf = try pki.leaf(commonName: "10.1.2.3", dnsNames: ["10.1.2.3"], ipAddresses: [])
        #expect(evaluate(leaf, host: "10.1.2.3").contains(.hostnameMismatch))
    }

    @Test func wildcardsCoverOneLabelOnly() throws {
        let leaf = try pki.leaf(commonName: "wild", dnsNames: ["*.example.test"], ipAddresses: [])
        #expect(evaluate(leaf, host: "api.example.test").isTrusted)
        #expect(evaluate(leaf, host: "a.b.example.test").contains(.hostnameMismatch))
        #expect(evaluate(leaf, host: "example.test").contains(.hostnameMismatch))
    }

    @Test func aMissingIntermediateIsAnUntrustedRoot() throws {
        let leaf = try pki.leaf()
        let result = CertificateChainEvaluator.evaluate(
            chain: [leaf.certificate],
            roots: anchors,
            host: "localhost",
            at: at
        )
        #expect(result.contains(.untrustedRoot))
    }

    @Test func aSelfSignedLeafCanBeItsOwnAnchor() throws {
        let selfSigned = try pki.selfSignedLeaf()
        let result = evaluate(selfSigned, roots: .anchors([selfSigned.certificate]))
        #expect(result.isTrusted, "\(result)")
    }

    @Test func anIntermediateCanBeTheAnchor() throws {
        let result = evaluate(try pki.leaf(), roots: .anchors([pki.intermediate.certificate]))
        #expect(result.isTrusted, "\(result)")
    }

    @Test func theSystemRootsDoNotTrustTheTestRootButSystemPlusAnchorsDoes() throws {
        let leaf = try pki.leaf()
        #expect(evaluate(leaf, roots: .system).contains(.untrustedRoot))
        #expect(evaluate(leaf, roots: .system(adding: [pki.root.certificate])).isTrusted)
    }

    @Test func aClientCertificateIsNotValidForServers() throws {
        let client = try pki.clientCertificate(issuer: pki.intermediate)
        let result = CertificateChainEvaluator.evaluate(chain: client.chain, roots: anchors, host: nil, at: at)
        #expect(result.contains(.invalidPurpose), "\(result)")
    }

    @Test func anEmptyChainIsMalformed() {
        let result = CertificateChainEvaluator.evaluate(chain: [], roots: anchors, host: "localhost")
        #expect(result.contains(.malformed))
    }

    @Test func aMissingSystemBundleIsAClearError() {
        let error = #expect(throws: SesameError.self) {
            _ = try SystemTrustStore.load(environment: ["SSL_CERT_FILE": "/nonexistent/bundle.pem"])
        }
        #expect(error?.code == .trustStoreUnavailable)
        #expect(error?.detail.contains("/nonexistent/bundle.pem") == true)
    }

    @Test func theSystemBundleLoadsFromTheDebianDefault() throws {
        let store = try SystemTrustStore.load(environment: [:])
        #expect(store.source.contains("ca-certificates.crt") || store.source.contains("default"))
    }
}
