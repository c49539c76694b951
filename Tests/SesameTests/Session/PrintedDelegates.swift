import Foundation
import Sesame
import Testing

// The delegates README.md and the Features article print, as printed (formatted by swift format):
// ReadmeExampleTests runs them against local servers, and the test below checks that they still
// say what the documents say. scripts/doc-samples.sh compiles the documents' own blocks.

// The Features article's "Porting delegate code" (ReadmeExampleTests runs it against a local server).
final class SeedDelegate: SessionTaskDelegate {
    let bundled: [Certificate]
    let identity: Identity
    init(certificateFile: String, pkcs12File: String, password: String) throws {
        bundled = try Certificate.load(contentsOf: certificateFile)
        identity = try Identity.load(pkcs12File: pkcs12File, password: password)
    }

    func session(
        _ session: Session,
        didReceive challenge: AuthenticationChallenge,
        completionHandler: @escaping @Sendable (Session.AuthChallengeDisposition, Credential?) -> Void
    ) {
        let space = challenge.protectionSpace
        if space.authenticationMethod == .serverTrust, let trust = space.serverTrust,
            let leaf = trust.peerChain.first, bundled.contains(leaf)
        {
            completionHandler(.useCredential, Credential(trust: trust))
        } else if space.authenticationMethod == .clientCertificate {
            completionHandler(.useCredential, Credential(identity: identity, persistence: .forSession))
        } else if space.authenticationMethod == .httpBasic, challenge.previousFailureCount == 0 {
            completionHandler(
                .useCredential,
                Credential(user: "ada", password: "s3cret", persistence: .forSession)
            )
        } else {
            completionHandler(.cancelAuthenticationChallenge, nil)
        }
    }
}

// README.md's "Answering challenges" (ReadmeExampleTests runs it).
final class Login: SessionTaskDelegate {
    func session(
        _ session: Session,
        didReceive challenge: AuthenticationChallenge,
        completionHandler: @escaping @Sendable (Session.AuthChallengeDisposition, Credential?) -> Void
    ) {
        guard challenge.previousFailureCount == 0 else {
            challenge.sender?.cancel(challenge)
            completionHandler(.cancelAuthenticationChallenge, nil)  // the task fails: authenticationCancelled
            return
        }
        completionHandler(.useCredential, Credential(user: "ada", password: "s3cret", persistence: .forSession))
    }
}

@Suite struct PrintedDelegateTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The text without white space, comments' own spacing or the trailing commas the formatter adds.
    static func normalized(_ code: String) -> String {
        code.filter { !$0.isWhitespace }.replacingOccurrences(of: ",)", with: ")")
    }

    /// The Swift blocks of the document at `path`, normalized.
    static func blocks(_ path: String) throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
        return text.components(separatedBy: "```swift").dropFirst().compactMap {
            $0.components(separatedBy: "```").first.map(normalized)
        }
    }

    /// The declaration of `type` in this file, normalized.
    static func declaration(of type: String) throws -> String {
        let source = try String(contentsOf: URL(fileURLWithPath: #filePath), encoding: .utf8)
        let start = try #require(source.range(of: "final class \(type)"))
        let end = try #require(source.range(of: "\n}\n", range: start.upperBound..<source.endIndex))
        return normalized(String(source[start.lowerBound..<end.upperBound]))
    }

    @Test func theDelegatesRunAreTheOnesPrinted() throws {
        let login = try Self.declaration(of: "Login")
        #expect(try Self.blocks("README.md").contains { $0.contains(login) })
        let seed = try Self.declaration(of: "SeedDelegate")
        #expect(try Self.blocks("Sources/Sesame/Docs.docc/Features.md").contains { $0.contains(seed) })
    }
}
