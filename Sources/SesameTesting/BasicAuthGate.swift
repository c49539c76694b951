import FoundationEssentials

/// A scripted HTTP Basic protection for ``LocalServer`` handlers: answers 401 with a challenge
/// unless the request carries one of `users` (UTF-8, RFC 7617).
///
/// ```swift
/// let gate = BasicAuthGate(realm: "test", users: ["ada": "s3cret"])
/// configuration.handler = { request in gate.check(request) ?? .text("hello \(gate.user(request)!)") }
/// ```
public struct BasicAuthGate: Sendable {
    /// The realm of the challenge.
    public let realm: String
    /// The accepted users and their passwords.
    public let users: [String: String]
    /// Extra challenges offered before Basic (such as `Bearer realm="x"`).
    public var otherChallenges: [String] = []

    /// A gate for `realm` that accepts `users`.
    public init(realm: String, users: [String: String]) {
        self.realm = realm
        self.users = users
    }

    /// The user the request authenticates as, if its `Authorization` is right.
    public func user(_ request: LocalServer.Request) -> String? {
        guard let header = request.headers["authorization"], header.lowercased().hasPrefix("basic "),
            let decoded = Data(base64Encoded: String(header.dropFirst(6)).trimmingWhitespace()),
            let text = String(data: decoded, encoding: .utf8), let colon = text.firstIndex(of: ":")
        else { return nil }
        let user = String(text[..<colon])
        return users[user] == String(text[text.index(after: colon)...]) ? user : nil
    }

    /// nil when the request may pass; otherwise the 401 to send.
    public func check(_ request: LocalServer.Request) -> LocalServer.Response? {
        guard user(request) == nil else { return nil }
        var headers = otherChallenges.map { ("WWW-Authenticate", $0) }
        headers.append(("WWW-Authenticate", "Basic realm=\"\(realm)\", charset=\"UTF-8\""))
        return .text("authentication required", status: 401, headers: headers)
    }
}
