import Foundation
import Sesame

/// A credential for a challenge (`URLCredential`): a user and password, a client identity with
/// the intermediates sent after it, or the acceptance of a server's trust.
open class URLCredential: NSObject, NSSecureCoding, NSCopying, @unchecked Sendable {
    // @unchecked: immutable.
    /// How long the credential is kept (`URLCredential.Persistence`).
    public enum Persistence: UInt, Sendable {
        /// Used for this request only.
        case none = 0
        /// Kept for the session's life, in memory.
        case forSession = 1
        /// Kept in the credential store's file (Apple's keychain).
        case permanent = 2
        /// Apple's iCloud-synchronised keychain; kept as `.permanent` here.
        case synchronizable = 3
    }

    let credential: Credential
    private let trust: SecTrust?
    private let identityObject: SecIdentity?
    private let certificateObjects: [SecCertificate]

    /// A user name and password, kept as `persistence` says.
    public init(user: String, password: String, persistence: Persistence) {
        credential = Credential(user: user, password: password, persistence: persistence.sesame)
        trust = nil
        identityObject = nil
        certificateObjects = []
    }

    /// A client identity; `certificates` are the intermediates sent after its certificate.
    public init(identity: SecIdentity, certificates: [Any]?, persistence: Persistence) {
        let intermediates = (certificates ?? []).compactMap { $0 as? SecCertificate }
        credential = Credential(
            identity: identity.identity,
            certificates: intermediates.map(\.certificate),
            persistence: persistence.sesame
        )
        trust = nil
        identityObject = identity
        certificateObjects = intermediates
    }

    /// Accepts the server trust as it is set now (with the anchors and policies the delegate gave it).
    public init(trust: SecTrust) {
        credential = Credential(trust: trust.serverTrust)
        self.trust = trust
        identityObject = nil
        certificateObjects = []
    }

    init(_ credential: Credential) {
        self.credential = credential
        trust = credential.serverTrust.map(SecTrust.init)
        identityObject = credential.identity.map(SecIdentity.init)
        certificateObjects = credential.certificates.map(SecCertificate.init)
    }

    /// The user name; nil for a certificate or trust credential.
    public var user: String? { credential.user }
    /// The password; nil for a certificate or trust credential. A `.permanent` credential read from
    /// the storage carries its password.
    public var password: String? { credential.password }
    /// Whether the credential has a password.
    public var hasPassword: Bool { credential.hasPassword }
    /// The client identity; nil for a password or trust credential.
    public var identity: SecIdentity? { identityObject }
    /// The intermediate certificates sent with the identity (`SecCertificate` objects).
    public var certificates: [Any] { certificateObjects }
    /// How long the credential is kept.
    public var persistence: Persistence {
        switch credential.persistence {
        case .none: .none
        case .forSession: .forSession
        case .permanent: .permanent
        }
    }

    /// The credential as Sesame sends it: for a trust, the trust as it is set at this moment.
    var sesame: Credential {
        if let trust { return Credential(trust: trust.serverTrust) }
        return credential
    }

    // MARK: - NSSecureCoding

    /// True: a credential encodes and decodes with `NSSecureCoding`.
    public static var supportsSecureCoding: Bool { true }

    /// A password credential archives its user, password and persistence. An identity or a trust
    /// archives as nothing that can be read back (Apple archives keychain references, which
    /// Linux has none of), so unarchiving one gives nil rather than a credential without its key.
    public func encode(with coder: NSCoder) {
        coder.encode(Int64(persistence.rawValue), forKey: "NS.persistence")
        guard let user = credential.user, let password = credential.password else { return }
        coder.encode(user as NSString, forKey: "NS.user")
        coder.encode(password as NSString, forKey: "NS.password")
    }

    public required init?(coder: NSCoder) {
        guard let user = coder.decodeObject(of: NSString.self, forKey: "NS.user"),
            let password = coder.decodeObject(of: NSString.self, forKey: "NS.password"),
            let persistence = Persistence(rawValue: UInt(clamping: coder.decodeInt64(forKey: "NS.persistence")))
        else { return nil }
        credential = Credential(user: user as String, password: password as String, persistence: persistence.sesame)
        trust = nil
        identityObject = nil
        certificateObjects = []
    }

    /// Credentials are immutable: a copy is the credential itself.
    public func copy(with zone: NSZone? = nil) -> Any { self }

    public override func isEqual(_ object: Any?) -> Bool { (object as? URLCredential)?.credential == credential }
    public override var hash: Int { credential.user?.hashValue ?? 0 }
    public override var description: String { credential.description }
}

extension URLCredential.Persistence {
    var sesame: CredentialPersistence {
        switch self {
        case .none: .none
        case .forSession: .forSession
        case .permanent, .synchronizable: .permanent
        }
    }
}
