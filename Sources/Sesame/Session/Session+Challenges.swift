import Foundation

extension Session {
    /// A credential for `space` found without asking: the request URL's user info, the storage's
    /// default (for the exact space, then for the realm under another password scheme, then one
    /// stored for any realm of the server), then `.netrc` when enabled.
    func automaticCredential(
        for space: ProtectionSpace,
        url: URL
    ) throws -> (Credential, ChallengeTrace.Responder)? {
        if !space.isProxy, let user = url.user(percentEncoded: false),
            let password = url.password(percentEncoded: false)
        {
            return (Credential(user: user, password: password, persistence: .forSession), .urlUserInfo)
        }
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
    func perform(_ effects: [TaskEffect]) {
        for effect in effects {
            switch effect {
            case .trace(let trace):
                configuration.eventObserver?(.challenge(trace))
            case .problem(let problem):
                configuration.eventObserver?(.challengeHeaderProblem(problem))
            case .succeeded(let attempt, .origin(let url)):
                remember(attempt, for: url)
            case .succeeded(let attempt, .proxy(let proxy)):
                rememberProxy(attempt, for: proxy)
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

    /// A credential worked: keep it per its persistence, and send it preemptively from now on.
    func remember(_ attempt: ChallengeResolver.Attempt, for url: URL) {
        guard attempt.responder != .preemptive else { return }
        preemptive.record(attempt, for: url)
        store(attempt)
    }

    /// Keeps a credential that worked in the credential storage, per its persistence.
    func store(_ attempt: ChallengeResolver.Attempt) {
        guard let storage = configuration.credentialStorage, attempt.credential.persistence != .none,
            attempt.responder != .storage
        else { return }
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
