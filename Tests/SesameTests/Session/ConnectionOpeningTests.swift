import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// The step that opens a connection beside a task's driver: its handshake's questions reach the
/// driver in order, the answers go back, and what the step comes to is never lost.
@Suite struct ConnectionOpeningTests {
    static let space = ProtectionSpace(
        host: "h.test",
        port: 443,
        protocol: "https",
        realm: nil,
        authenticationMethod: .clientCertificate
    )

    @Test func questionsReachTheDriverAndTheAnswersGoBackInOrder() async throws {
        let loop = try EventLoop(name: "opening-questions")
        defer { loop.shutdown() }
        let answers = LockedValue<[AuthChallengeDisposition]>([])
        let opening = ConnectionOpening(
            on: loop,
            discard: { _ in },
            step: { opening -> ConnectionOpening.Outcome in
                for _ in 0..<2 {
                    let answer = await opening.ask(Self.space)
                    answers.withLock { $0.append(answer.disposition) }
                }
                throw SesameError(.connectFailed, "no server")
            }
        )
        for disposition in [AuthChallengeDisposition.useCredential, .rejectProtectionSpace] {
            guard case .asks(let space) = await opening.next() else {
                Issue.record("no question")
                return
            }
            #expect(space == Self.space)
            opening.answer((disposition, nil))
        }
        guard case .finished(.failure(let error as SesameError)) = await opening.next() else {
            Issue.record("the step did not end with its error")
            return
        }
        #expect(error.code == .connectFailed)
        #expect(answers.withLock { $0 } == [.useCredential, .rejectProtectionSpace])
    }

    @Test func anAbandonedStepCancelsTheQuestionWaitingAndGivesBackWhatItOpened() async throws {
        let loop = try EventLoop(name: "opening-abandoned")
        defer { loop.shutdown() }
        let server = try LocalServer(.plainHTTP)
        defer { server.shutdown() }
        let connection = try await Connection.connect(host: "localhost", port: server.port, tls: nil)
        let discarded = LockedValue(0)
        let answered = LockedValue<AuthChallengeDisposition?>(nil)
        let opening = ConnectionOpening(
            on: loop,
            discard: { _ in discarded.withLock { $0 += 1 } },
            step: { opening -> ConnectionOpening.Outcome in
                answered.withLock { $0 = nil }
                let answer = await opening.ask(Self.space)
                answered.withLock { $0 = answer.disposition }
                return .tunnelAnswer(
                    HTTPResponse(status: 200, reason: "", headers: [:], url: URL(string: "https://h.test/")!),
                    connection: connection,
                    leftover: [],
                    reusable: false
                )
            }
        )
        guard case .asks = await opening.next() else {
            Issue.record("no question")
            return
        }
        opening.abandon()
        while discarded.withLock({ $0 }) == 0 { await Task.yield() }
        #expect(answered.withLock { $0 } == .cancelAuthenticationChallenge)
        await connection.close()
    }

}
