import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// AFNetworking's security policy semantics over chains from the test PKI, evaluated at the PKI's
/// reference time.
@Suite struct SecurityPolicyTests {
    let pki = sharedPKI

    func trust(
        _ certificate: TestIssuedCertificate,
        host: String = "localhost",
        roots: TrustRoots? = nil
    ) -> ServerTrust {
        ServerTrust(
            host: host,
            port: 443,
            peerChain: certificate.chain,
            isResumedSession: false,
            trustRoots: roots ?? .anchors([pki.root.certificate])
        )
    }

    func evaluate(
        _ policy: SecurityPolicy,
        _ trust: ServerTrust,
        domain: String? = "localhost"
    ) -> SecurityPolicy.Evaluation {
        policy.evaluation(of: trust, forDomain: domain, at: pki.now)
    }

    @Test func theDefaultPolicyValidatesChainAndDomain() throws {
        #expect(evaluate(.default, trust(try pki.leaf())).isTrusted)
        #expect(!evaluate(.default, trust(try pki.wrongHostLeaf())).isTrusted)
        #expect(!evaluate(.default, trust(try pki.expiredLeaf())).isTrusted)
        #expect(!evaluate(.default, trust(try pki.untrustedLeaf())).isTrusted)
        var noDomain = SecurityPolicy.default
        noDomain.validatesDomainName = false
        #expect(evaluate(noDomain, trust(try pki.wrongHostLeaf())).isTrusted)
    }

    @Test func publicKeyPinsMatchAnyKeyOfTheValidatedChain() throws {
        let leaf = try pki.leaf()
        for pinned in [leaf.certificate, pki.intermediate.certificate, pki.root.certificate] {
            let policy = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [pinned])
            #expect(evaluate(policy, trust(leaf)).isTrusted, "\(pinned.subject)")
        }
        let other = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [pki.untrustedRoot.certificate])
        let refused = evaluate(other, trust(leaf))
        #expect(!refused.isTrusted)
        #expect(refused.reasons == ["no pinned public key in the validated chain"])
    }

    @Test func aPinnedCertificateAppendedToAnUnrelatedChainDoesNotPass() throws {
        // CVE-2016-2402: the attacker's valid chain for the host, plus the victim's pinned
        // certificate tacked on the end. Pins count only in the validated chain.
        let attacker = try pki.untrustedLeaf()
        let pinned = try pki.leaf()
        var chain = attacker.chain
        chain.append(pinned.certificate)
        let attack = ServerTrust(
            host: "localhost",
            port: 443,
            peerChain: chain,
            isResumedSession: false,
            trustRoots: .anchors([pki.root.certificate, pki.untrustedRoot.certificate])
        )
        for mode in [SecurityPolicy.PinningMode.publicKey, .certificate] {
            let policy = SecurityPolicy(pinningMode: mode, pinnedCertificates: [pinned.certificate])
            #expect(!evaluate(policy, attack).isTrusted, "\(mode)")
        }
    }

    @Test func certificatePinsAreTheAnchors() throws {
        // A self-signed server, trusted only because its certificate is pinned (the seeds' case).
        let selfSigned = try pki.selfSignedLeaf()
        let policy = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [selfSigned.certificate])
        #expect(evaluate(policy, trust(selfSigned, roots: .anchors([]))).isTrusted)
        // Pinning the intermediate also works: the chain validates up to it.
        let leaf = try pki.leaf()
        let intermediate = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [pki.intermediate.certificate])
        #expect(evaluate(intermediate, trust(leaf, roots: .anchors([]))).isTrusted)
        // Not pinned: refused even though the chain is valid under the configured roots.
        let elsewhere = SecurityPolicy(pinningMode: .certificate, pinnedCertificates: [pki.untrustedRoot.certificate])
        #expect(!evaluate(elsewhere, trust(leaf)).isTrusted)
    }

    @Test func allowInvalidCertificatesFollowsAFNetworking() throws {
        let selfSigned = try pki.selfSignedLeaf()
        var lax = SecurityPolicy.default
        lax.allowInvalidCertificates = true
        // Validating the domain of an invalid chain needs pins.
        #expect(!evaluate(lax, trust(selfSigned, roots: .anchors([]))).isTrusted)
        lax.validatesDomainName = false
        #expect(evaluate(lax, trust(selfSigned, roots: .anchors([]))).isTrusted)
        // With public-key pins, an invalid chain is judged by the server's own key only.
        var pinnedLax = SecurityPolicy(pinningMode: .publicKey, pinnedCertificates: [selfSigned.certificate])
        pinnedLax.allowInvalidCertificates = true
        #expect(evaluate(pinnedLax, trust(selfSigned, roots: .anchors([]))).isTrusted)
        let other = try pki.selfSignedLeaf()
        #expect(!evaluate(pinnedLax, trust(other, roots: .anchors([]))).isTrusted)
    }

    @Test func pinnedCertificatesLoadFromAFolder() throws {
        let directory = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: directory) }
        try pki.root.certificate.derEncoded.write(to: directory.appendingPathComponent("root.cer"))
        try Data(pki.intermediate.certificatePEM.utf8).write(to: directory.appendingPathComponent("intermediate.pem"))
        try Data("not a certificate".utf8).write(to: directory.appendingPathComponent("notes.txt"))
        let loaded = try SecurityPolicy.certificates(inDirectory: directory)
        #expect(loaded == [pki.root.certificate, pki.intermediate.certificate])
        try Data("garbage".utf8).write(to: directory.appendingPathComponent("broken.der"))
        let error = #expect(throws: SesameError.self) { try SecurityPolicy.certificates(inDirectory: directory) }
        #expect(error?.description.contains("broken.der") == true)
    }

    @Test func aSessionAppliesItsPolicyWhenNoDelegateDecides() async throws {
        let origin = try server(tls: true) { _ in .text("ok") }
        defer { origin.shutdown() }
        let pinned = testSession {
            $0.securityPolicy = SecurityPolicy(
                pinningMode: .publicKey,
                pinnedCertificates: [self.pki.intermediate.certificate]
            )
        }
        let (_, response) = try await pinned.data(from: url(origin, "/"))
        #expect(response.status == 200)
        let wrongPin = testSession {
            $0.securityPolicy = SecurityPolicy(
                pinningMode: .publicKey,
                pinnedCertificates: [self.pki.untrustedRoot.certificate]
            )
        }
        let error = await #expect(throws: SesameError.self) { _ = try await wrongPin.data(from: url(origin, "/")) }
        #expect(error?.code == .serverTrustRejected)
        // The pin never replaces validation: a pinned key in an untrusted chain is still refused.
        let unvalidated = testSession {
            $0.tls.trustRoots = .anchors([])
            $0.securityPolicy = SecurityPolicy(
                pinningMode: .publicKey,
                pinnedCertificates: [self.pki.intermediate.certificate]
            )
        }
        await #expect(throws: SesameError.self) { _ = try await unvalidated.data(from: url(origin, "/")) }
    }
}
