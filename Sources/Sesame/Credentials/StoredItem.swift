import FoundationEssentials
import Glibc

/// A secret a ``CredentialStore`` keeps beside its protection-space passwords, for callers
/// that keep other things in the same place: SesameNetworking's Keychain Services keep generic
/// passwords, certificates and keys this way.
///
/// The store treats the class and the attributes as opaque strings and matches nothing but
/// the class and the identifier; the caller gives them meaning.
public struct StoredItem: Sendable, Hashable, Codable, CustomStringConvertible {
    /// Names the item for as long as it exists (a random UUID in practice); unique in its store.
    public var id: String
    /// The kind of item, as the caller names it ("genp", "cert").
    public var itemClass: String
    /// The item's attributes, encoded by the caller.
    public var attributes: [String: String]
    /// The secret (a password's bytes, a key).
    public var data: [UInt8]
    /// What a person sees for the item in a keyring manager such as Seahorse.
    public var label: String

    /// An item with these fields, as given.
    public init(id: String, itemClass: String, attributes: [String: String], data: [UInt8], label: String = "") {
        self.id = id
        self.itemClass = itemClass
        self.attributes = attributes
        self.data = data
        self.label = label
    }

    /// The class and identifier, never the data.
    public var description: String { "StoredItem(\(itemClass) \(id))" }

    private enum CodingKeys: String, CodingKey {
        case id
        case itemClass = "class"
        case attributes
        case data
        case label
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        itemClass = try container.decode(String.self, forKey: .itemClass)
        attributes = try container.decode([String: String].self, forKey: .attributes)
        let text = try container.decode(String.self, forKey: .data)
        guard let bytes = Data(base64Encoded: text) else {
            throw DecodingError.dataCorruptedError(forKey: .data, in: container, debugDescription: "not base64")
        }
        data = Array(bytes)
        label = try container.decodeIfPresent(String.self, forKey: .label) ?? ""
    }

    /// The data as base64, so a file holds it as one string.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(id, forKey: .id)
        try container.encode(itemClass, forKey: .itemClass)
        try container.encode(attributes, forKey: .attributes)
        try container.encode(Data(data).base64EncodedString(), forKey: .data)
        try container.encode(label, forKey: .label)
    }
}

extension CredentialStore {
    /// Stores that keep no items say so: a custom ``CredentialStore`` need not implement them.
    public func items(ofClass itemClass: String) throws(SesameError) -> [StoredItem] {
        throw Self.keepsNoItems(location)
    }

    public func modifyItems(
        ofClass itemClass: String,
        _ change: ([StoredItem]) throws(SesameError) -> [StoredItem]
    ) throws(SesameError) {
        throw Self.keepsNoItems(location)
    }

    static func keepsNoItems(_ location: String) -> SesameError {
        SesameError(.credentialStoreUnavailable, "the credential store \(location) keeps no items beside passwords")
    }
}

/// What a change to a class's items asks a store to do.
struct StoredItemChanges {
    /// Items that are new or differ from what was there, by identifier.
    var written: [StoredItem]
    /// Identifiers that are gone.
    var removed: [String]

    init(from before: [StoredItem], to after: [StoredItem]) {
        let old = Dictionary(before.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        let kept = Set(after.map(\.id))
        written = after.filter { old[$0.id] != $0 }
        removed = before.map(\.id).filter { !kept.contains($0) }
    }

    /// Whether a change keeps each identifier once and the class it was asked for.
    static func validate(_ items: [StoredItem], ofClass itemClass: String) throws(SesameError) {
        var seen = Set<String>()
        for item in items {
            guard item.itemClass == itemClass, !item.id.isEmpty, seen.insert(item.id).inserted else {
                throw SesameError(
                    .invalidArgument,
                    "a change to \(itemClass) items must keep their class and one item per identifier (\(item))"
                )
            }
        }
    }
}
