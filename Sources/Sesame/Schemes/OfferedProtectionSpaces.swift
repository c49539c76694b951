/// The protection spaces a 401 (or 407) response offers, strongest scheme first.
enum OfferedProtectionSpaces {
    /// Parses the response's challenge fields for `origin` and ranks them: Digest before Basic,
    /// schemes Sesame cannot answer last (still offered: a delegate may answer or reject them).
    static func parse(
        _ response: HTTPResponse,
        origin: Origin,
        isProxy: Bool
    ) -> (spaces: [ProtectionSpace], problems: [String]) {
        let field = isProxy ? "Proxy-Authenticate" : "WWW-Authenticate"
        let parsed = AuthChallengeParser.parse(response.headers.values(for: field))
        let server = ProtectionSpace(
            host: origin.host,
            port: origin.port,
            protocol: isProxy ? nil : origin.scheme,
            realm: nil,
            authenticationMethod: .default,
            isProxy: isProxy,
            proxyType: isProxy ? origin.scheme : nil
        )
        var seen = Set<ProtectionSpace>()
        let spaces = parsed.challenges.enumerated()
            .sorted { (rank($0.element.method), $0.offset) < (rank($1.element.method), $1.offset) }
            .map { server.with(realm: $0.element.realm, method: $0.element.method) }
            .filter { seen.insert($0).inserted }
        return (spaces, parsed.problems)
    }

    private static func rank(_ method: AuthenticationMethod) -> Int {
        switch method {
        case .httpDigest: 0
        case .httpBasic: 1
        default: 2
        }
    }
}
