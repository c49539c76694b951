/// An answer to a challenge (`NSURLCredential`): a user and password, a client identity with the
/// certificates to send, or a server trust to accept.
///
/// ```swift
/// let credential = Credential(user: "ada", password: "s3cret", persistence: .forSession)
/// ```
public struct Credential: Sendable, Equatable, CustomStringConvertible {
    enum Kind: Sendable {
        case password(user: String, password: String?)
        case identity(Identity, certificates: [Certificate])
        case trust(ServerTrust)
        /// The user's Kerberos ticket cache, which default handling answers Negotiate with.
        case ticketCache
    }

    let kind: Kind
    /// How long the credential is remembered once it worked.
    public let persistence: CredentialPersistence

    /// A user and password (`init(user:password:persistence:)`).
    public init(user: String, password: String, persistence: CredentialPersistence) {
        kind = .password(user: user, password: password)
        self.persistence = persistence
    }

    /// A user whose password is not known (such as a stored entry listed without it).
    init(user: String, password: String?, persistence: CredentialPersistence) {
        kind = .password(user: user, password: password)
        self.persistence = persistence
    }

    /// A client identity and the intermediate certificates to send after its own
    /// (`init(identity:certificates:persistence:)`). `.permanent` is kept in memory only.
    public init(identity: Identity, certificates: [Certificate] = [], persistence: CredentialPersistence) {
        kind = .identity(identity, certificates: certificates)
        self.persistence = persistence
    }

    /// Accept this server trust (`init(trust:)`).
    public init(trust: ServerTrust) {
        kind = .trust(trust)
        persistence = .forSession
    }

    /// The user's Kerberos ticket cache: what default handling answers a Negotiate challenge with.
    static let ticketCache = Credential(kind: .ticketCache, persistence: .none)

    private init(kind: Kind, persistence: CredentialPersistence) {
        self.kind = kind
        self.persistence = persistence
    }

    /// Whether this is the user's Kerberos ticket cache rather than a credential given.
    var isTicketCache: Bool {
        if case .ticketCache = kind { return true }
        return false
    }

    /// The user name of a password credential.
    public var user: String? {
        if case .password(let user, _) = kind { return user }
        return nil
    }

    /// The password of a password credential.
    public var password: String? {
        if case .password(_, let password) = kind { return password }
        return nil
    }

    /// True when the credential carries a password.
    public var hasPassword: Bool { password != nil }

    /// The client identity of a certificate credential.
    public var identity: Identity? {
        if case .identity(let identity, _) = kind { return identity }
        return nil
    }

    /// The certificates sent after the identity's own.
    public var certificates: [Certificate] {
        if case .identity(_, let certificates) = kind { return certificates }
        return []
    }

    /// The trust a server-trust credential accepts.
    public var serverTrust: ServerTrust? {
        if case .trust(let trust) = kind { return trust }
        return nil
    }

    /// Never shows the password.
    public var description: String {
        switch kind {
        case .password(let user, let password):
            "Credential(user: \(user), password: \(password == nil ? "none" : "<redacted>"), \(persistence))"
        case .identity(let identity, _): "Credential(identity: \(identity.certificate.subject), \(persistence))"
        case .trust(let trust): "Credential(trust: \(trust.host):\(trust.port))"
        case .ticketCache: "Credential(Kerberos ticket cache)"
        }
    }

    public static func == (lhs: Credential, rhs: Credential) -> Bool {
        guard lhs.persistence == rhs.persistence else { return false }
        switch (lhs.kind, rhs.kind) {
        case (.password(let a, let p), .password(let b, let q)): return a == b && p == q
        case (.identity(let a, let x), .identity(let b, let y)): return a == b && x == y
        case (.trust(let a), .trust(let b)):
            return a.host == b.host && a.port == b.port && a.peerChain == b.peerChain
        case (.ticketCache, .ticketCache): return true
        default: return false
        }
    }
}
