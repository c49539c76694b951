import FoundationEssentials
import Glibc
import Sesame

/// `-v`: `*` lines for connections and TLS, `>` for the request head, `<` for response heads and
/// trailers.
enum Verbose {
    static func print(_ event: SessionEvent) {
        var lines: [String] = []
        switch event {
        case .connected(let origin, let address, let reused):
            lines.append("* \(reused ? "Re-using connection to" : "Connected to") \(origin) (\(address))")
        case .tlsEstablished(_, let info):
            lines.append("* TLS: \(info.protocolVersion) \(info.cipherSuite)")
            if let alpn = info.applicationProtocol { lines.append("* ALPN: \(alpn)") }
            if let leaf = info.peerChain.first {
                lines.append("* Server certificate: \(leaf.subject)")
                lines.append("*   issuer: \(leaf.issuer)")
                lines.append("*   valid: \(leaf.notValidBefore) to \(leaf.notValidAfter)")
                lines.append("*   public key pin: sha256//\(leaf.publicKey.sha256Pin)")
            }
            if let evaluation = info.trustEvaluation {
                lines.append("* Server trust: \(evaluation)")
            } else {
                lines.append("* Server trust: decided by a handshake hook")
            }
            if let status = info.stapledOCSPStatus { lines.append("* OCSP staple: \(status)") }
            if info.isSessionReused { lines.append("* TLS session resumed (trust decided again)") }
            if let client = info.clientCertificate { lines.append("* Client certificate: \(client.subject)") }
        case .streamOpened(let origin, let id):
            lines.append("* [HTTP/2] [\(id)] OPENED stream for \(origin)")
        case .requestHeadSent(let head):
            lines += head.split(separator: "\r\n", omittingEmptySubsequences: false).map { "> \($0)" }
            lines.append(">")
        case .responseHeadReceived(let head):
            lines += head.split(separator: "\r\n", omittingEmptySubsequences: false).map { "< \($0)" }
            lines.append("<")
        case .redirected(let status, let url):
            lines.append("* Following the \(status) redirect to \(redacted(url))")
        case .challenge(let trace):
            lines.append("* challenge \(trace)")
        case .challengeHeaderProblem(let problem):
            lines.append("* challenge header: \(problem)")
        case .tunnel(let proxy, let target, let status):
            lines.append("* CONNECT \(target) via \(proxy): \(status)")
        case .credentialNotStored(let space, let error):
            lines.append("* credential for \(space) not stored: \(error)")
        case .tokenRefreshed(let origin, let waiting):
            lines.append("* bearer token for \(origin) refreshed (\(waiting) request\(waiting == 1 ? "" : "s") waited)")
        case .tokenRefreshFailed(let origin, let error):
            lines.append("* bearer token refresh for \(origin) failed: \(error)")
        }
        Output.standardError(lines.joined(separator: "\n") + "\n")
    }

    /// The trailer fields after a body, as curl shows them: `<` lines once the body is out.
    static func printTrailers(_ trailers: HTTPHeaders) {
        guard !trailers.isEmpty else { return }
        let lines = trailers.map { "< \($0.name): \($0.value)" }
        Output.standardError(lines.joined(separator: "\n") + "\n")
    }

    /// The URL without user name and password (`-u` travels in the URL's user info).
    private static func redacted(_ url: URL) -> String {
        guard url.user != nil || url.password != nil,
            var components = URLComponents(url: url, resolvingAgainstBaseURL: true)
        else { return url.absoluteString }
        components.user = nil
        components.password = nil
        return components.string ?? "(a URL with credentials)"
    }
}
