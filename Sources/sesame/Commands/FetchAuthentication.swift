import FoundationEssentials
import Sesame

/// `-u`, `--basic`, `--netrc`, `--credential-store` and `--save-credentials` for a fetch: how the
/// credential is offered, which challenges were answered, and what to save afterwards.
final class FetchAuthentication: Sendable {
    let user: String?
    let password: String?
    let preemptiveBasic: Bool
    let storage: CredentialStorage
    let saves: Bool
    private let traces = LockedTraces()

    init(options: FetchOptions) throws {
        // `-u :` names no credential: default handling answers Negotiate with the ticket cache.
        let given = options.user?.isTicketCache == true ? nil : options.user
        user = given?.user
        password = try given?.resolvedPassword()
        preemptiveBasic = options.serverSchemes == .basic && options.user != nil
        // Typed with -u (`-u :` included), the credential answers the server's challenges and the
        // permanent store is not opened at all: no keyring call, no unlock prompt, unless
        // --save-credentials or --credential-store asks for it.
        let readsStore = options.user == nil || options.saveCredentials || options.credentialStore != nil
        storage = readsStore ? try CredentialStoreOption.storage(options.credentialStore) : CredentialStorage()
        saves = options.saveCredentials
        methods = options.serverSchemes.methods
    }

    /// Records a challenge trace (called from the session's event observer).
    func observe(_ event: SessionEvent) {
        if case .challenge(let trace) = event { traces.append(trace) }
    }

    /// The schemes answered: `--basic`, `--digest`, `--negotiate` or `--ntlm` alone; with
    /// `--anyauth` every scheme; else Digest and Basic (as curl, Negotiate and NTLM only when asked).
    let methods: Set<AuthenticationMethod>?

    /// `request` with the credential where the session finds it: in the URL's user info (used
    /// first when a challenge comes, before anything stored), or as a Basic header with `--basic`.
    func offering(to request: HTTPRequest) throws -> HTTPRequest {
        var request = request
        guard let user, let password else { return request }
        // Negotiate sends a Kerberos ticket, never the password.
        if request.url.scheme?.lowercased() == "http", methods != [.negotiate] {
            // Typed on the command line for an http URL: the user chose this for that URL's origin
            // (the password in the URL is the consent), never for the hosts a redirect leads to.
            Output.error(
                "warning: the password for '\(user)' may travel unencrypted to \(request.url.host ?? "the server")"
            )
        }
        if preemptiveBasic {
            request.headers.add(
                name: "Authorization",
                value: try BasicAuthentication.authorization(user: user, password: password)
            )
            return request
        }
        guard var components = URLComponents(url: request.url, resolvingAgainstBaseURL: true) else { return request }
        components.user = user
        components.password = password
        if let url = components.url { request.url = url }
        return request
    }

    /// The protection space the credential was accepted for, if it was used.
    private func acceptedSpace(_ url: URL) -> ProtectionSpace? {
        if preemptiveBasic { return ProtectionSpace(url: url, realm: nil, authenticationMethod: .httpBasic) }
        return traces.all.last {
            $0.responder == .urlUserInfo && $0.disposition == .useCredential && !$0.protectionSpace.isProxy
        }?.protectionSpace
    }

    /// After the final response: exit 6 when credentials were sent and still refused; otherwise
    /// save the credential when asked.
    func finish(finalStatus: Int?, finalURL: URL, requestURL url: URL) -> ExitCode? {
        let proxyTraces = traces.all.filter { $0.protectionSpace.isProxy }
        if finalStatus == 407 {
            let attempts = proxyTraces.filter { $0.disposition == .useCredential }.count
            let space = proxyTraces.last?.protectionSpace.description ?? "the proxy"
            Output.error(
                attempts > 0
                    ? "proxy authentication failed: \(space) refused the credentials (\(attempts) attempts)"
                    : "proxy authentication failed: \(space) asks for credentials (give them with -U USER[:PASSWORD])"
            )
            return .proxyAuthentication
        }
        // The final response's server only: a password accepted by a host before a redirect says
        // nothing about a 401 from the host after it.
        let finalOrigin = ProtectionSpace(url: finalURL, realm: nil, authenticationMethod: nil)
        let serverTraces = traces.all.filter {
            !$0.protectionSpace.isProxy && $0.protectionSpace.host.lowercased() == finalOrigin?.host.lowercased()
                && $0.protectionSpace.port == finalOrigin?.port
        }
        let requestOrigin = ProtectionSpace(url: url, realm: nil, authenticationMethod: nil)
        let sameOrigin =
            finalOrigin?.host.lowercased() == requestOrigin?.host.lowercased()
            && finalOrigin?.port == requestOrigin?.port
        let sentCredentials =
            (preemptiveBasic && sameOrigin) || serverTraces.contains { $0.disposition == .useCredential }
        if finalStatus == 401, sentCredentials {
            let attempts = serverTraces.filter { $0.disposition == .useCredential }.count
            let space = serverTraces.last?.protectionSpace.description ?? url.host ?? "the server"
            Output.error("authentication failed: \(space) refused the credentials (\(max(attempts, 1)) attempts)")
            return .authentication
        }
        guard saves, let finalStatus, finalStatus != 401, let user, let password, let space = acceptedSpace(url) else {
            if saves, finalStatus != nil, finalStatus != 401 {
                Output.error("warning: --save-credentials: no challenge was answered with -u, so nothing was saved")
            }
            return nil
        }
        do {
            try storage.setDefaultCredential(
                Credential(user: user, password: password, persistence: .permanent),
                for: space
            )
            return nil
        } catch {
            Output.error("could not save the credential: \(error)")
            return .failure
        }
    }
}

/// Traces collected from the event observer (any thread).
final class LockedTraces: Sendable {
    private let values = LockedValue<[ChallengeTrace]>([])

    func append(_ trace: ChallengeTrace) { values.withLock { $0.append(trace) } }
    var all: [ChallengeTrace] { values.withLock { $0 } }
}
