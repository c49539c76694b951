import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Who answers a Basic challenge, for every combination of what the task's and the session's
/// delegates implement.
@Suite struct DelegateRoutingTests {
    enum Implementation: String, CaseIterable, Sendable {
        case absent, silent, taskAsync, taskHandler, sessionLevel
    }

    final class Silent: SessionTaskDelegate {}

    final class TaskAsync: SessionTaskDelegate {
        func session(
            _ session: Session,
            task: SessionTask,
            didReceive challenge: AuthenticationChallenge
        ) async -> (AuthChallengeDisposition, Credential?) {
            // Server trust reaches the task-level method too (Apple's rule): default handling.
            challenge.protectionSpace.authenticationMethod == .serverTrust
                ? (.performDefaultHandling, nil) : (.useCredential, ada)
        }
    }

    final class TaskHandler: SessionTaskDelegate {
        func session(
            _ session: Session,
            task: SessionTask,
            didReceive challenge: AuthenticationChallenge,
            completionHandler: @escaping @Sendable (AuthChallengeDisposition, Credential?) -> Void
        ) {
            let trust = challenge.protectionSpace.authenticationMethod == .serverTrust
            DispatchQueue.global().async {
                trust ? completionHandler(.performDefaultHandling, nil) : completionHandler(.useCredential, ada)
            }
        }
    }

    final class SessionLevel: SessionTaskDelegate {
        func session(
            _ session: Session,
            didReceive challenge: AuthenticationChallenge,
            completionHandler: @escaping @Sendable (AuthChallengeDisposition, Credential?) -> Void
        ) {
            // Only password challenges get a credential; trust goes to default handling.
            guard challenge.protectionSpace.authenticationMethod == .httpBasic else {
                return completionHandler(.performDefaultHandling, nil)
            }
            completionHandler(.useCredential, ada)
        }
    }

    static func make(_ implementation: Implementation) -> (any SessionTaskDelegate)? {
        switch implementation {
        case .absent: nil
        case .silent: Silent()
        case .taskAsync: TaskAsync()
        case .taskHandler: TaskHandler()
        case .sessionLevel: SessionLevel()
        }
    }

    @Test(arguments: Implementation.allCases, Implementation.allCases)
    func theFirstImplementerAnswers(task: Implementation, session: Implementation) async throws {
        let origin = try basicServer()
        defer { origin.shutdown() }
        let traces = Recorder<ChallengeTrace>()
        let sessionDelegate = Self.make(session)
        let client = challengeSession(delegate: sessionDelegate, traces: traces)
        let (_, response) = try await client.data(from: url(origin, "/private/x"), delegate: Self.make(task))
        // A task delegate's session-level method is not on a task challenge's path, so a task
        // delegate that only has it counts as silent.
        let taskAnswers = task == .taskAsync || task == .taskHandler
        let sessionAnswers = session == .taskAsync || session == .taskHandler || session == .sessionLevel
        let expected: ChallengeTrace.Responder =
            taskAnswers ? .taskDelegate : sessionAnswers ? .sessionDelegate : .defaultHandling
        #expect(traces.all.first?.responder == expected, "\(traces.all)")
        #expect(response.status == (expected == .defaultHandling ? 401 : 200))
    }
}
