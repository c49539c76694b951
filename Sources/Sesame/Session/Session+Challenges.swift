import FoundationEssentials
import Glibc

extension Session {
    /// A credential for `space` found without asking: the request URL's user info, the storage's
    /// default (for the exact space, then for the realm under another password scheme, then one
    /// stored for any realm of the server), then `.netrc` when enabled.
    func automaticCredential(
        for space: ProtectionSpace,
        url: URL
    ) async throws -> (Credential, ChallengeTrace.Responder)? {
        if !space.isProxy, let user = url.user(percentEncoded: false),
            let password = url.password(percentEncoded: false)
        {
            return (Credential(user: user, password: password, persistence: .forSession), .urlUserInfo)
        }
        guard configuration.credentialStorage != nil || configuration.usesNetrc else { return nil }
        // The store and `.netrc` may block (a D-Bus call, a file lock): never on the task's thread,
        // which may be one of Swift's few pool threads or an event loop's.
        return try await BlockingWorkThreads.credentials.run { [self] in try storedCredential(for: space) }
    }

    /// The storage's default credential for `space` (or for the password spaces it stands for),
    /// else a `.netrc` entry. Blocks on the store's I/O.
    private func storedCredential(for space: ProtectionSpace) throws -> (Credential, ChallengeTrace.Responder)? {
        if let storage = configuration.credentialStorage {
            var candidates = [space]
            if space.authenticationMethod.usesPassword {
                // A password serves every password scheme of its realm; one stored without a realm
                // serves every realm of its server.
                let methods = [space.authenticationMethod, .httpDigest, .httpBasic, .default]
                for realm in Set([space.realm, nil]).sorted(by: { ($0 == nil ? 1 : 0) < ($1 == nil ? 1 : 0) }) {
                    for method in methods {
                        let candidate = space.with(realm: realm, method: method)
                        if !candidates.contains(candidate) { candidates.append(candidate) }
                    }
                }
            }
            if let credential = try storage.defaultCredential(forFirstOf: candidates) { return (credential, .storage) }
        }
        if configuration.usesNetrc, !space.isProxy, space.authenticationMethod.usesPassword,
            let netrc = try Netrc.load(configuration.netrcFile ?? Netrc.defaultURL),
            let entry = netrc.entry(for: space.host), let login = entry.login, let password = entry.password
        {
            return (Credential(user: login, password: password, persistence: .forSession), .netrc)
        }
        return nil
    }

    /// Performs what a task's state machine asked for besides its next action.
    func perform(_ effects: [TaskEffect]) async {
        for effect in effects {
            switch effect {
            case .trace(let trace):
                configuration.eventObserver?(.challenge(trace))
            case .problem(let problem):
                configuration.eventObserver?(.challengeHeaderProblem(problem))
            case .succeeded(let attempt, .origin(let url)):
                await remember(attempt, for: url)
            case .succeeded(let attempt, .proxy(let proxy)):
                await rememberProxy(attempt, for: proxy)
            case .refused(let space, .origin):
                preemptive.forget(space)
            case .refused(_, .proxy(let proxy)):
                forgetProxy(proxy)
            case .redirected(let status, let url):
                configuration.eventObserver?(.redirected(status: status, to: url))
            }
        }
    }

    /// Calls one delegate method of a challenge's chain and tells what it said. A method the
    /// delegate does not implement runs Sesame's default, which marks the challenge: that is
    /// `.methodMissing`, never an answer. Otherwise the first answer counts, whether it came
    /// through the sender, the completion handler or the return value.
    func ask(
        _ entry: DelegateChain.Entry,
        _ challenge: AuthenticationChallenge,
        task: SessionTask?
    ) async
        -> DelegateAnswer
    {
        let owner = entry.owner == .taskDelegate ? task?.delegate : delegate
        guard let owner else { return .methodMissing }
        _ = challenge.takeMethodMissing()
        let returned: (AuthChallengeDisposition, Credential?)
        switch entry.method {
        case .sessionLevel:
            returned = await offLoop { await owner.session(self, didReceive: challenge) }
        case .taskLevel:
            guard let task else { return .methodMissing }
            returned = await offLoop { await owner.session(self, task: task, didReceive: challenge) }
        }
        if challenge.takeMethodMissing() { return .methodMissing }
        challenge.answer.resolve(returned.0, returned.1)
        let (disposition, credential) = await challenge.answer.value()
        return .answered(disposition, credential)
    }

    /// Runs an exchange's next step on a credential thread (Negotiate's may wait for the KDC),
    /// bound to the TLS connection `tls` describes.
    func establish(
        _ exchange: any SecurityExchange,
        input: [UInt8]?,
        over tls: TLSConnectionInfo?
    ) async -> Result<Void, SesameError> {
        let binding = ChannelBinding.of(tls)
        do {
            try await BlockingWorkThreads.credentials.run { try exchange.step(input, channelBinding: binding) }
            return .success(())
        } catch let error as SesameError {
            return .failure(error)
        } catch {
            return .failure(SesameError(.negotiateFailed, "\(error)"))
        }
    }

    /// A credential worked: keep it per its persistence, and send it preemptively from now on.
    func remember(_ attempt: ChallengeResolver.Attempt, for url: URL) async {
        guard attempt.responder != .preemptive else { return }
        // An exchange (Negotiate, NTLM) answers one challenge: the next request gets one of its own.
        if case .exchange = attempt.authorizer {} else { preemptive.record(attempt, for: url) }
        await store(attempt)
    }

    /// Keeps a credential that worked in the credential storage, per its persistence, on a
    /// credential thread (the store may block); the task goes on once it is kept.
    func store(_ attempt: ChallengeResolver.Attempt) async {
        guard configuration.credentialStorage != nil, attempt.credential.persistence != .none,
            attempt.responder != .storage
        else { return }
        // `store` reports its own failures: nothing is thrown.
        _ = try? await BlockingWorkThreads.credentials.run { [self] in storeNow(attempt) }
    }

    private func storeNow(_ attempt: ChallengeResolver.Attempt) {
        guard let storage = configuration.credentialStorage else { return }
        do {
            let hasDefault = try storage.defaultCredential(for: attempt.space) != nil
            if hasDefault {
                try storage.set(attempt.credential, for: attempt.space)
            } else {
                try storage.setDefaultCredential(attempt.credential, for: attempt.space)
            }
        } catch {
            let failure = error as? SesameError ?? SesameError(.credentialStoreFailed, "\(error)")
            configuration.eventObserver?(.credentialNotStored(attempt.space, failure))
        }
    }
}

extension BlockingWorkThreads {
    /// Credential-store and `.netrc` reads and writes: a Secret Service call may wait seconds for
    /// its daemon (an unlock prompt, a minute), so these never share threads with name lookups.
    /// Four at a time, so that one store waiting for its daemon does not hold up every lookup.
    static let credentials = BlockingWorkThreads(limit: 4)
}
