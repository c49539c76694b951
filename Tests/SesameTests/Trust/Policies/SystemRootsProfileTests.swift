import Foundation
import Testing

@testable import Sesame

/// The anchor rules must not refuse the roots a Debian system trusts: each root in the system
/// bundle, in the anchor position, violates nothing.
@Suite struct SystemRootsProfileTests {
    @Test func everySystemRootPassesTheAnchorRules() throws {
        let roots = try Certificate.load(contentsOf: "/etc/ssl/certs/ca-certificates.crt")
        #expect(roots.count > 100)
        var refused: [String] = []
        for root in roots {
            let position = PathCertificate(certificate: root, depth: 1, path: [root, root], leafNames: [])
            let problems = ServerProfile.policies.flatMap { $0.problems(of: position, host: nil) }
            if !problems.isEmpty { refused.append("\(root.subject): \(problems)") }
        }
        #expect(refused.isEmpty, "\(refused.joined(separator: "\n"))")
    }
}
