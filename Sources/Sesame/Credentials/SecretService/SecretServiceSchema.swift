internal import CSesameShims
import FoundationEssentials
import Glibc

/// The two libsecret schemas Sesame uses, built once and kept for the life of the process (libsecret
/// reads them on every call).
enum SecretServiceSchema {
    /// Sesame's own, matched by name (`SECRET_SCHEMA_NONE`): libsecret adds `xdg:schema` to what
    /// it stores and searches for, so another program's item with the same attribute names is
    /// never taken for Sesame's. (`SECRET_SCHEMA_DONT_MATCH_NAME` would need the name in every
    /// query, which libsecret's file backend never stores.)
    case sesame
    /// `org.gnome.keyring.NetworkPassword` with libsecret's own flags
    /// (`SECRET_SCHEMA_DONT_MATCH_NAME`), so items written before schemas had names match too.
    case network
    /// Sesame's schema for ``StoredItem``s (`org.sesame.Item`), matched by name as `sesame` is.
    case items

    var pointer: LibSecret.Schema {
        switch self {
        case .sesame: Self.sesameSchema
        case .network: Self.networkSchema
        case .items: Self.itemSchema
        }
    }

    // Allocated once and never freed or written again (C code keeps schemas in static storage).
    nonisolated(unsafe) private static let sesameSchema = make(
        SecretServiceAttributes.schemaName,
        flags: 2,
        SecretServiceAttributes.schemaAttributes
    )
    nonisolated(unsafe) private static let networkSchema = make(
        SecretServiceAttributes.networkSchemaName,
        flags: 2,
        SecretServiceAttributes.networkAttributes
    )

    nonisolated(unsafe) private static let itemSchema = make(
        SecretServiceAttributes.itemSchemaName,
        flags: 2,
        SecretServiceAttributes.itemAttributes
    )

    private static func make(
        _ name: String,
        flags: Int32,
        _ attributes: [(String, SecretServiceAttributes.Kind)]
    ) -> LibSecret.Schema {
        precondition(attributes.count < 32, "a libsecret schema has at most 32 attributes")
        let schema = UnsafeMutablePointer<CSesameShims_SecretSchema>.allocate(capacity: 1)
        schema.initialize(to: CSesameShims_SecretSchema())
        schema.pointee.name = UnsafePointer(strdup(name))
        schema.pointee.flags = flags
        withUnsafeMutableBytes(of: &schema.pointee.attributes) { raw in
            let slots = raw.bindMemory(to: CSesameShims_SecretSchemaAttribute.self)
            for (index, (attribute, kind)) in attributes.enumerated() {
                slots[index] = CSesameShims_SecretSchemaAttribute(
                    name: UnsafePointer(strdup(attribute)),
                    type: kind.rawValue
                )
            }
        }
        return UnsafePointer(schema)
    }
}
