import Foundation
import Testing

@testable import Sesame

@Suite struct ChallengeResolverTests {
    let basic = ProtectionSpace(host: "h", port: 443, protocol: "https", realm: "r", authenticationMethod: .httpBasic)
    let bearer = ProtectionSpace(
        host: "h",
        port: 443,
        protocol: "https",
        realm: "r",
        authenticationMethod: .httpScheme("Bearer")
    )
    var basicOffer: ChallengeOffer { offer(basic, "Basic realm=\"r\"") }
    var bearerOffer: ChallengeOffer { offer(bearer, "Bearer realm=\"r\"") }

    func offer(_ space: ProtectionSpace, _ field: String) -> ChallengeOffer {
        let challenge = AuthChallengeParser.parse(field).challenges[0]
        return ChallengeOffer(space: space, challenge: challenge, digest: DigestChallenge(challenge))
    }

    let unauthorized = HTTPResponse(status: 401, reason: "Unauthorized", headers: [:], url: URL(string: "https://h/")!)
    let ok = HTTPResponse(status: 200, reason: "OK", headers: [:], url: URL(string: "https://h/")!)
    let none: ChallengeResolver.Automatic = { _ in nil }

    func resolver(cap: Int = 3, cleartext: Bool = false) -> ChallengeResolver {
        ChallengeResolver(maximumFailures: cap, allowsCleartextPasswords: cleartext, task: nil)
    }

    func challenge(of step: ChallengeResolver.Step) throws -> AuthenticationChallenge {
        guard case .ask(let challenge) = step else {
            Issue.record("expected a question, got \(step)")
            throw SesameError(.invalidArgument, "no question")
        }
        return challenge
    }

    @Test func everyDispositionOnAFirstChallenge() throws {
        for disposition in [
            AuthChallengeDisposition.useCredential, .performDefaultHandling, .cancelAuthenticationChallenge,
            .rejectProtectionSpace,
        ] {
            var machine = resolver()
            let question = try challenge(
                of: try machine.received(unauthorized, challenged: true, offers: [basicOffer], automatic: none)
            )
            #expect(question.previousFailureCount == 0)
            #expect(question.proposedCredential == nil)
            let step = try machine.answered(disposition, ada, by: .taskDelegate, for: question, automatic: none)
            switch (disposition, step) {
            case (.useCredential, .retry(let attempt)):
                if case .fixed(let value) = attempt.authorizer { #expect(value == "Basic YWRhOnMzY3JldA==") }
                #expect(attempt.responder == .taskDelegate)
            case (.performDefaultHandling, .deliver(nil)), (.rejectProtectionSpace, .deliver(nil)):
                break
            case (.cancelAuthenticationChallenge, .fail(let error)):
                #expect(error.code == .authenticationCancelled)
            default:
                Issue.record("\(disposition) led to \(step)")
            }
            #expect(machine.drainTraces().map(\.disposition) == [disposition])
        }
    }

    @Test func aNewRealmEachTimeEndsAtTheRoundTripBound() throws {
        // A credential found without asking is tried once per realm; a server naming a new realm on
        // every 401 would get one request after another without the task's own bound.
        let found: ChallengeResolver.Automatic = { _ in (ada, .storage) }
        for bound in [1, 4, 10] {
            var machine = ChallengeResolver(
                maximumFailures: 3,
                maximumRoundTrips: bound,
                allowsCleartextPasswords: false,
                task: nil
            )
            var retries = 0
            for realm in 0..<100 {
                let space = basic.with(realm: "realm \(realm)", method: .httpBasic)
                let step = try machine.received(
                    unauthorized,
                    challenged: true,
                    offers: [offer(space, "Basic realm=\"realm \(realm)\"")],
                    automatic: found
                )
                guard case .retry = step else {
                    guard case .deliver(nil) = step else {
                        Issue.record("expected delivery at the bound, got \(step)")
                        break
                    }
                    break
                }
                retries += 1
            }
            #expect(retries == bound)
            #expect(machine.drainTraces().last?.responder == .failureLimit)
        }
    }

    @Test func tracesAreKeptOnlyWhenRecorded() throws {
        let attempt = ChallengeResolver.Attempt(
            space: basic,
            credential: Credential(user: "ada", password: "s3cret", persistence: .forSession),
            responder: .preemptive,
            authorizer: .fixed("Basic YWRhOnMzY3JldA==")
        )
        for records in [true, false] {
            var machine = resolver()
            machine.recordsTraces = records
            machine.sending(preemptive: attempt)
            guard case .deliver(nil) = try machine.received(ok, challenged: false, offers: [], automatic: none) else {
                Issue.record("a preemptive success is delivered without storing it again")
                continue
            }
            #expect(machine.drainTraces().map(\.responder) == (records ? [.preemptive] : []))
        }
    }

    @Test func useCredentialWithoutACredentialDeliversTheResponse() throws {
        var machine = resolver()
        let question = try challenge(
            of: try machine.received(unauthorized, challenged: true, offers: [basicOffer], automatic: none)
        )
        guard
            case .deliver(nil) = try machine.answered(
                .useCredential,
                nil,
                by: .taskDelegate,
                for: question,
                automatic: none
            )
        else {
            Issue.record("expected delivery")
            return
        }
    }

    @Test func failuresCountPerSpaceAndStopAtTheCap() throws {
        var machine = resolver(cap: 2)
        var step = try machine.received(unauthorized, challenged: true, offers: [basicOffer], automatic: none)
        var counts: [Int] = []
        while case .ask(let question) = step {
            counts.append(question.previousFailureCount)
            step = try machine.answered(.useCredential, wrong, by: .sessionDelegate, for: question, automatic: none)
            guard case .retry = step else { break }
            step = try machine.received(unauthorized, challenged: true, offers: [basicOffer], automatic: none)
        }
        #expect(counts == [0, 1])
        guard case .deliver(nil) = step else {
            Issue.record("expected delivery at the cap, got \(step)")
            return
        }
        #expect(machine.drainTraces().last?.responder == .failureLimit)
    }

    @Test func successReportsTheAttemptToStore() throws {
        var machine = resolver()
        let question = try challenge(
            of: try machine.received(unauthorized, challenged: true, offers: [basicOffer], automatic: none)
        )
        _ = try machine.answered(.useCredential, ada, by: .taskDelegate, for: question, automatic: none)
        guard case .deliver(let succeeded?) = try machine.received(ok, challenged: false, offers: [], automatic: none)
        else {
            Issue.record("expected a success")
            return
        }
        #expect(succeeded.credential == ada)
        #expect(succeeded.space == basic)
    }

    @Test func anAutomaticCredentialGoesFirstThenTheDelegateSeesItProposed() throws {
        let stored: ChallengeResolver.Automatic = { _ in (wrong, .storage) }
        var machine = resolver()
        guard
            case .retry(let attempt) = try machine.received(
                unauthorized,
                challenged: true,
                offers: [basicOffer],
                automatic: stored
            )
        else {
            Issue.record("expected the stored credential to be sent")
            return
        }
        #expect(attempt.responder == .storage)
        let question = try challenge(
            of: try machine.received(unauthorized, challenged: true, offers: [basicOffer], automatic: stored)
        )
        #expect(question.previousFailureCount == 1)
        #expect(question.proposedCredential == wrong)
        // Default handling does not send the same failed credential again.
        guard
            case .deliver(nil) = try machine.answered(
                .performDefaultHandling,
                nil,
                by: .defaultHandling,
                for: question,
                automatic: stored
            )
        else {
            Issue.record("expected delivery")
            return
        }
    }

    @Test func rejectMovesDownTheOfferedSpaces() throws {
        var machine = resolver()
        let first = try challenge(
            of: try machine.received(
                unauthorized,
                challenged: true,
                offers: [basicOffer, bearerOffer],
                automatic: none
            )
        )
        #expect(first.protectionSpace == basic)
        let second = try challenge(
            of: try machine.answered(.rejectProtectionSpace, nil, by: .taskDelegate, for: first, automatic: none)
        )
        #expect(second.protectionSpace == bearer)
        // A password cannot answer a scheme Sesame does not implement.
        guard
            case .fail(let error) = try machine.answered(
                .useCredential,
                ada,
                by: .taskDelegate,
                for: second,
                automatic: none
            )
        else {
            Issue.record("expected a failure")
            return
        }
        #expect(error.code == .unsupportedCredential)
    }

    @Test func cleartextBasicIsRefusedUnlessAllowed() throws {
        let plain = ProtectionSpace(host: "h", port: 80, protocol: "http", realm: "r", authenticationMethod: .httpBasic)
        #expect(!plain.receivesCredentialSecurely)
        let stored: ChallengeResolver.Automatic = { _ in (ada, .storage) }
        var machine = resolver()
        // The stored credential is not used automatically; the delegate is asked instead.
        let question = try challenge(
            of: try machine.received(
                unauthorized,
                challenged: true,
                offers: [offer(plain, "Basic realm=\"r\"")],
                automatic: stored
            )
        )
        guard
            case .fail(let error) = try machine.answered(
                .useCredential,
                ada,
                by: .taskDelegate,
                for: question,
                automatic: stored
            )
        else {
            Issue.record("expected a refusal")
            return
        }
        #expect(error.code == .cleartextCredentialRefused)
        var allowing = resolver(cleartext: true)
        guard
            case .retry = try allowing.received(
                unauthorized,
                challenged: true,
                offers: [offer(plain, "Basic realm=\"r\"")],
                automatic: stored
            )
        else {
            Issue.record("expected the stored credential to be sent")
            return
        }
    }

    @Test func aFailedPreemptiveAttemptCountsAsAFailure() throws {
        var machine = resolver()
        machine.sending(
            preemptive: .init(space: basic, credential: wrong, responder: .preemptive, authorizer: .fixed("Basic x"))
        )
        let question = try challenge(
            of: try machine.received(unauthorized, challenged: true, offers: [basicOffer], automatic: none)
        )
        #expect(question.previousFailureCount == 1)
        #expect(machine.lastFailure?.responder == .preemptive)
    }

    @Test func basicRejectsUserNamesWithColons() throws {
        #expect(throws: SesameError.self) { try BasicAuthentication.authorization(user: "a:b", password: "c") }
        #expect(try BasicAuthentication.authorization(user: "test", password: "123£") == "Basic dGVzdDoxMjPCow==")
    }
}
