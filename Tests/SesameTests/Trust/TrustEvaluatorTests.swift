import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Per-host evaluators, pin sets and the trust manager, over chains from the test PKI.
@Suite struct TrustEvaluatorTests {
    let pki = sharedPKI

    func trust(_ certificate: TestIssuedCertificate, host: String = "localhost") -> ServerTrust {
        ServerTrust(
            host: host,
            port: 443,
            peerChain: certificate.chain,
            isResumedSession: false,
            trustRoots: .anchors([pki.root.certificate])
        )
    }

    func pin(_ certificate: Certificate) -> String { "sha256/" + certificate.publicKey.sha256Pin }

    @Test func evaluatorsAcceptAndRefuseWithReasons() throws {
        let leaf = try pki.leaf()
        try DefaultTrustEvaluator().evaluate(trust(leaf), forHost: "localhost")
        let wrongHost = #expect(throws: SesameError.self) {
            try DefaultTrustEvaluator().evaluate(self.trust(leaf, host: "elsewhere"), forHost: "elsewhere")
        }
        #expect(wrongHost?.code == .serverTrustRejected)
        #expect(wrongHost?.detail.contains("hostname mismatch") == true)
        try DefaultTrustEvaluator(validatesHost: false).evaluate(trust(leaf, host: "elsewhere"), forHost: "elsewhere")
        try PublicKeysTrustEvaluator(keys: [pki.intermediate.certificate.publicKey]).evaluate(
            trust(leaf),
            forHost: "localhost"
        )
        #expect(throws: SesameError.self) {
            try PublicKeysTrustEvaluator(keys: [self.pki.untrustedRoot.certificate.publicKey])
                .evaluate(self.trust(leaf), forHost: "localhost")
        }
        try PinnedCertificatesTrustEvaluator(certificates: [pki.root.certificate]).evaluate(
            trust(leaf),
            forHost: "localhost"
        )
        try CompositeTrustEvaluator([
            DefaultTrustEvaluator(), PublicKeysTrustEvaluator(keys: [leaf.certificate.publicKey]),
        ])
        .evaluate(trust(leaf), forHost: "localhost")
        try InsecureDisabledTrustEvaluator().evaluate(trust(try pki.expiredLeaf()), forHost: "anything")
    }

    @Test func theManagerPicksExactThenTheMostSpecificWildcard() throws {
        let manager = ServerTrustManager(
            evaluators: [
                "api.example.com": DefaultTrustEvaluator(),
                "*.example.com": DefaultTrustEvaluator(validatesHost: false),
                "*.deep.example.com": InsecureDisabledTrustEvaluator(),
            ]
        )
        #expect(try manager.serverTrustEvaluator(forHost: "API.example.com") is DefaultTrustEvaluator)
        #expect(try manager.serverTrustEvaluator(forHost: "www.example.com") is DefaultTrustEvaluator)
        #expect(try manager.serverTrustEvaluator(forHost: "a.deep.example.com") is InsecureDisabledTrustEvaluator)
        #expect(throws: SesameError.self) { try manager.serverTrustEvaluator(forHost: "example.com") }
        let lenient = ServerTrustManager(allHostsMustBeEvaluated: false, evaluators: [:])
        #expect(try lenient.serverTrustEvaluator(forHost: "example.com") == nil)
    }

    @Test func pinSetsNeedABackupPinAndWellFormedPins() throws {
        let leaf = try pki.leaf()
        #expect(throws: SesameError.self) { try PinSet([.init(host: "localhost", pins: [self.pin(leaf.certificate)])]) }
        #expect(throws: SesameError.self) { try PinSet([.init(host: "localhost", pins: ["sha256/short", "md5/x"])]) }
    }

    @Test func pinRotationWithABackupPinAndReports() throws {
        let leaf = try pki.leaf()
        let reports = Recorder<PinSet.FailureReport>()
        // The current intermediate plus a backup key not yet in use.
        let backup = "sha256/" + pki.untrustedRoot.certificate.publicKey.sha256Pin
        let pins = try PinSet(
            [.init(host: "localhost", pins: [pin(pki.intermediate.certificate), backup])],
            report: { reports.append($0) }
        )
        try pins.evaluate(trust(leaf), forHost: "localhost")
        // The server moved to the backup key (another CA here): still pinned.
        let rotated = ServerTrust(
            host: "localhost",
            port: 443,
            peerChain: try pki.untrustedLeaf().chain,
            isResumedSession: false,
            trustRoots: .anchors([pki.untrustedRoot.certificate])
        )
        try pins.evaluate(rotated, forHost: "localhost")
        // Neither pin: refused, and reported with the observed chain.
        let stranger = try PinSet(
            [
                .init(
                    host: "localhost",
                    includesSubdomains: true,
                    pins: [backup, "sha256/" + Data(repeating: 9, count: 32).base64EncodedString()]
                )
            ],
            report: { reports.append($0) }
        )
        #expect(throws: SesameError.self) { try stranger.evaluate(self.trust(leaf), forHost: "localhost") }
        let report = try #require(reports.all.last)
        #expect(report.host == "localhost")
        #expect(report.observedPins.contains(pin(pki.intermediate.certificate)))
        #expect(report.json.contains("\"expectedPins\""))
        // Other hosts are not pinned.
        #expect(stranger.rule(for: "other.test") == nil)
        #expect(stranger.rule(for: "www.localhost") != nil)
    }

    @Test func expiredPinsStopOnlyWhenTheCallerChoseSo() throws {
        let leaf = try pki.leaf()
        let wrong = [
            "sha256/" + Data(repeating: 1, count: 32).base64EncodedString(),
            "sha256/" + Data(repeating: 2, count: 32).base64EncodedString(),
        ]
        let past = Date(timeIntervalSince1970: 0)
        let strict = try PinSet([.init(host: "localhost", pins: Set(wrong), expiration: past)])
        #expect(throws: SesameError.self) { try strict.evaluate(self.trust(leaf), forHost: "localhost") }
        let lapsing = try PinSet([
            .init(host: "localhost", pins: Set(wrong), expiration: past, enforcesAfterExpiration: false)
        ])
        try lapsing.evaluate(trust(leaf), forHost: "localhost")
    }

    @Test func aSessionUsesTheManagersEvaluatorAndReportsItsReasons() async throws {
        let origin = try server(tls: true) { _ in .text("ok") }
        defer { origin.shutdown() }
        let wrongPins = try PinSet(
            [
                .init(
                    host: "localhost",
                    pins: [
                        "sha256/" + Data(repeating: 7, count: 32).base64EncodedString(),
                        "sha256/" + Data(repeating: 8, count: 32).base64EncodedString(),
                    ]
                )
            ]
        )
        let session = testSession { $0.serverTrustManager = ServerTrustManager(evaluators: ["localhost": wrongPins]) }
        let error = await #expect(throws: SesameError.self) { _ = try await session.data(from: url(origin, "/")) }
        #expect(error?.code == .serverTrustRejected)
        #expect(error?.detail.contains("matches the pins") == true)
        let right = try PinSet([
            .init(host: "localhost", pins: [pin(pki.root.certificate), pin(pki.untrustedRoot.certificate)])
        ])
        let good = testSession { $0.serverTrustManager = ServerTrustManager(evaluators: ["localhost": right]) }
        let (_, response) = try await good.data(from: url(origin, "/"))
        #expect(response.status == 200)
        // 127.0.0.1 has no evaluator, and every host must have one.
        let strict = testSession { $0.serverTrustManager = ServerTrustManager(evaluators: ["localhost": right]) }
        await #expect(throws: SesameError.self) {
            _ = try await strict.data(from: URL(string: "https://127.0.0.1:\(origin.port)/")!)
        }
    }
}

@Suite struct TrustEvaluationCacheTests {
    @Test func trustedResultsAreReusedPerHostAndChainAndFailuresAreNot() throws {
        let cache = TrustEvaluationCache()
        let leaf = try sharedPKI.leaf()
        let trust = ServerTrust(
            host: "localhost",
            port: 443,
            peerChain: leaf.chain,
            isResumedSession: false,
            trustRoots: .anchors([sharedPKI.root.certificate])
        )
        let first = cache.evaluate(trust)
        #expect(first.isTrusted)
        #expect(cache.evaluate(trust).verifiedChain == first.verifiedChain)
        // Another host for the same chain is evaluated on its own (and fails: wrong name).
        let other = ServerTrust(
            host: "elsewhere.test",
            port: 443,
            peerChain: leaf.chain,
            isResumedSession: false,
            trustRoots: .anchors([sharedPKI.root.certificate])
        )
        #expect(!cache.evaluate(other).isTrusted)
        #expect(!cache.evaluate(other).isTrusted)
    }
}

@Suite struct PinnedResumptionTests {
    /// Counts evaluations, then defers to a pin set.
    final class Counting: ServerTrustEvaluating {
        let inner: PinSet
        let resumed = Recorder<Bool>()
        init(_ inner: PinSet) { self.inner = inner }
        func evaluate(_ trust: ServerTrust, forHost host: String) throws {
            resumed.append(trust.isResumedSession)
            try inner.evaluate(trust, forHost: host)
        }
    }

    @Test func aResumedSessionStillGoesThroughThePins() async throws {
        let origin = try server(tls: true) { _ in .text("ok", headers: [("Connection", "close")]) }
        defer { origin.shutdown() }
        let pins = try PinSet(
            [
                .init(
                    host: "localhost",
                    pins: [
                        "sha256/" + sharedPKI.intermediate.certificate.publicKey.sha256Pin,
                        "sha256/" + sharedPKI.untrustedRoot.certificate.publicKey.sha256Pin,
                    ]
                )
            ]
        )
        let counting = Counting(pins)
        let session = testSession {
            $0.tls.applicationProtocols = ["sesame-pinned-resumption"]  // a TLS context of its own
            $0.serverTrustManager = ServerTrustManager(evaluators: ["localhost": counting])
        }
        for _ in 0..<3 {
            let (_, response) = try await session.data(from: url(origin, "/"))
            #expect(response.status == 200)
        }
        // Every connection (the server closes each) was judged by the pins, resumed or not.
        #expect(counting.resumed.all.count == 3)
        #expect(counting.resumed.all.dropFirst().contains(true), "\(counting.resumed.all)")
    }
}

@Suite struct PinSyntaxTests {
    @Test func pinsWhoseBase64StartsWithASlashAreNotMisread() throws {
        let digest = Data([0xFC] + [UInt8](repeating: 1, count: 31))
        let base64 = digest.base64EncodedString()
        #expect(base64.hasPrefix("/"))
        #expect(PublicKey.normalizedPin("sha256/" + base64) == "sha256/" + base64)
        #expect(PublicKey.normalizedPin("sha256//" + base64) == "sha256/" + base64)
        #expect(PublicKey.normalizedPin("sha256/short") == nil)
        #expect(PublicKey.normalizedPin("md5/" + base64) == nil)
        let rule = PinSet.Rule(host: "h", pins: ["sha256/" + base64])
        #expect(rule.pins == ["sha256/" + base64])
    }
}
