import FoundationEssentials
import Glibc

/// A password kept by a ``CredentialStore`` for a protection space.
public struct StoredCredential: Sendable, Hashable, CustomStringConvertible {
    /// Where an entry came from.
    public enum Origin: Sendable, Hashable {
        /// Written by Sesame (its file, or its schema in the Secret Service).
        case sesame
        /// Another program's item under libsecret's network-password schema
        /// (`org.gnome.keyring.NetworkPassword`): read, never rewritten or removed by Sesame.
        case networkPassword
    }

    /// The protection space the password is for.
    public var protectionSpace: ProtectionSpace
    /// The user name.
    public var user: String
    /// The password.
    public var password: String
    /// The default credential of its space.
    public var isDefault: Bool
    /// Where the entry came from; entries of other programs are read-only to Sesame.
    public var origin: Origin

    /// An entry with these fields, as given.
    public init(
        protectionSpace: ProtectionSpace,
        user: String,
        password: String,
        isDefault: Bool = false,
        origin: Origin = .sesame
    ) {
        self.protectionSpace = protectionSpace
        self.user = user
        self.password = password
        self.isDefault = isDefault
        self.origin = origin
    }

    /// The entry as a `.permanent` credential.
    public var credential: Credential { Credential(user: user, password: password, persistence: .permanent) }

    /// The space and user, never the password.
    public var description: String { "\(user) for \(protectionSpace)\(isDefault ? ", the default" : "")" }
}

/// Where ``CredentialStorage`` keeps `.permanent` passwords: the freedesktop Secret Service
/// (``SecretServiceCredentialStore``) or a file (``FileCredentialStore``).
///
/// Every method may block on I/O (a file lock, a D-Bus call bounded by the store's timeout) and
/// throws a ``SesameError`` naming the store and the cause; a store never answers a failed read
/// with an empty result.
public protocol CredentialStore: Sendable {
    /// The store for messages and listings: a file path, or "Secret Service (...)".
    var location: String { get }

    /// The entries for `spaces` (any of them), or every entry when `spaces` is nil.
    func entries(for spaces: [ProtectionSpace]?) throws(SesameError) -> [StoredCredential]

    /// Saves `entry`, replacing the entry with the same space and user; when `entry.isDefault`,
    /// the space's other entries stop being its default.
    func save(_ entry: StoredCredential) throws(SesameError)

    /// Makes `user` the default of `space` (nil: no default); false when it has no entry there.
    func setDefault(user: String?, for space: ProtectionSpace) throws(SesameError) -> Bool

    /// Removes `user`'s entry from `space`; false when there was none.
    func remove(user: String, from space: ProtectionSpace) throws(SesameError) -> Bool

    /// A signal for each burst of changes made by any process (this one included), where the
    /// store can observe them; nil when it cannot. Each access starts a new watch, which ends
    /// when the stream's consumer stops. ``CredentialStorage`` reads the entries again on each
    /// signal and announces what changed.
    var externalChanges: AsyncStream<Void>? { get }

    /// The items of `itemClass` kept beside the passwords (``StoredItem``); by default the
    /// store keeps none and says so.
    func items(ofClass itemClass: String) throws(SesameError) -> [StoredItem]

    /// Replaces the items of `itemClass` with what `change` returns for them: items with a new
    /// identifier are added, changed ones rewritten, missing ones removed. The file store does
    /// it under its lock, so writers in several processes take turns; the Secret Service, which
    /// has no lock, writes each added or changed item before it removes any.
    func modifyItems(
        ofClass itemClass: String,
        _ change: ([StoredItem]) throws(SesameError) -> [StoredItem]
    ) throws(SesameError)
}

extension CredentialStore {
    public var externalChanges: AsyncStream<Void>? { nil }
}
