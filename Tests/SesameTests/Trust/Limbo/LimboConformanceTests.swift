import Foundation
import Testing

@testable import Sesame

/// x509-limbo's SERVER cases through ``CertificateChainEvaluator``: agreement with the expected
/// result, and (what matters most) the cases accepted that must be rejected. The figures are
/// printed; the test fails when a wrongly accepted case appears that is not in the known list.
@Suite struct LimboConformanceTests {
    struct Suite: Decodable {
        let testcases: [Case]
    }

    struct PeerName: Decodable {
        let kind: String
        let value: String
    }

    struct Case: Decodable {
        let id: String
        let validation_kind: String
        let trusted_certs: [String]
        let untrusted_intermediates: [String]
        let peer_certificate: String
        let validation_time: String?
        let expected_peer_name: PeerName?
        let crls: [String]
        let max_chain_depth: Int?
        let expected_result: String
    }

    enum Outcome: String {
        case agree, wronglyAccepted, wronglyRejected, skipped
    }

    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()

    /// Cases Sesame still accepts though they must be rejected; shrink it, never grow it.
    static let knownWronglyAccepted: Set<String> = []

    /// Cases where Sesame knowingly disagrees, each with the reason (as rustls-webpki's and Go's
    /// limbo harnesses list theirs).
    static let knownDivergences: [String: String] = [
        "rfc5280::ca-as-leaf":
            "conflicts with webpki::ca-as-leaf (a CA certificate as a server's leaf); the server profile follows the CA/Browser Forum (BR §7.1.2.7.8) where it and RFC 5280 disagree",
        "rfc5280::eku::ee-without-eku":
            "conflicts with webpki::eku::ee-without-eku: the server profile requires the extended key usage, as BR §7.1.2.7.10 and Apple's platforms do",
        "rfc5280::nc::permitted-dns-match-noncritical":
            "conflicts with webpki::nc::permitted-dns-match-noncritical: the Forum allows name constraints that are not critical (BR §7.1.2.5.2), and every verifier applies them either way",
        "webpki::cn::not-in-san":
            "conflicts with x509-limbo's own valid leaves, which carry CN=example.com beside unrelated SANs (rfc5280::nc::permitted-ipv4-match, webpki::san::exact-localhost-ip-san); names are matched against SANs only and no browser checks BR §7.1.4.3, so only a common name that respells a SAN is refused",
        "webpki::san::public-suffix-private-namespace-wildcard-san":
            "`*.s3.amazonaws.com` covers a suffix of the Public Suffix List's PRIVATE section; BR §3.2.2.6 tells CAs to consult the ICANN section only, browsers check wildcards against it alone, and Amazon's own S3 certificate names exactly this wildcard (x509-limbo's online::s3.amazonaws.com), so refusing it would refuse a real site",
    ]

    static func run(_ testCase: Case) throws -> (Outcome, String) {
        let anchors = try testCase.trusted_certs.map { try Certificate(pemEncoded: $0) }
        let chain = try ([testCase.peer_certificate] + testCase.untrusted_intermediates).map {
            try Certificate(pemEncoded: $0)
        }
        let date = try testCase.validation_time.map { try ValidationTime.parse($0) }
        let host: String?
        switch testCase.expected_peer_name?.kind {
        case "DNS", "IP": host = testCase.expected_peer_name?.value
        case nil: host = nil
        default: return (.skipped, "peer name kind \(testCase.expected_peer_name?.kind ?? "")")
        }
        let result = CertificateChainEvaluator.evaluate(
            chain: chain,
            roots: .anchors(anchors),
            host: host,
            at: date,
            maximumDepth: testCase.max_chain_depth,
            crls: try testCase.crls.map { try CertificateRevocationList(Data($0.utf8)) }
        )
        let accepted = result.isTrusted
        let expected = testCase.expected_result == "SUCCESS"
        if accepted == expected { return (.agree, "\(result)") }
        return (accepted ? .wronglyAccepted : .wronglyRejected, "\(result)")
    }

    /// About 1,300 evaluations: seconds of processor time (tens under the sanitizers). The loop
    /// yields after each case so that it never holds one of the few concurrency threads for long;
    /// the tests running beside it talk to servers that give up on a client stalled for seconds.
    /// `SESAME_LIMBO_FILE` names another file of limbo cases (the other half of the suite, cases
    /// of one's own) to run instead; the known lists then apply to it as to the file here.
    @Test func serverCases() async throws {
        let file = ProcessInfo.processInfo.environment["SESAME_LIMBO_FILE"].map(URL.init(fileURLWithPath:))
        let data = try Data(contentsOf: file ?? Self.folder.appendingPathComponent("limbo.json"))
        let suite = try JSONDecoder().decode(Suite.self, from: data)
        var counts: [Outcome: Int] = [:]
        var wronglyAccepted: [String] = []
        var report: [String] = []
        var disagreements: Set<String> = []
        for testCase in suite.testcases where testCase.validation_kind == "SERVER" {
            let (outcome, detail): (Outcome, String)
            do {
                (outcome, detail) = try Self.run(testCase)
            } catch {
                (outcome, detail) = (testCase.expected_result == "FAILURE" ? .agree : .wronglyRejected, "\(error)")
            }
            await Task.yield()
            counts[outcome, default: 0] += 1
            if outcome == .wronglyAccepted { wronglyAccepted.append(testCase.id) }
            if outcome != .agree {
                report.append("  \(outcome.rawValue) \(testCase.id): \(detail)")
                disagreements.insert(testCase.id)
            }
        }
        let total = counts.values.reduce(0, +)
        print(
            "x509-limbo SERVER cases: \(counts[.agree, default: 0]) of \(total) agree, "
                + "\(counts[.wronglyAccepted, default: 0]) wrongly accepted, "
                + "\(counts[.wronglyRejected, default: 0]) wrongly rejected, \(counts[.skipped, default: 0]) skipped"
        )
        print(report.joined(separator: "\n"))
        let unexpected = Set(wronglyAccepted).subtracting(Self.knownWronglyAccepted).subtracting(
            Self.knownDivergences.keys
        )
        #expect(unexpected.isEmpty, "newly accepted though they must be rejected: \(unexpected.sorted())")
        let unexplained = disagreements.subtracting(Self.knownDivergences.keys)
        #expect(unexplained.isEmpty, "disagreements that are not known divergences: \(unexplained.sorted())")
        let divergencesHere = Self.knownDivergences.keys.filter { id in suite.testcases.contains { $0.id == id } }
        #expect(counts[.agree, default: 0] >= total - divergencesHere.count)
    }
}
