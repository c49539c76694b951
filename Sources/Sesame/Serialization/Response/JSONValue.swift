import FoundationEssentials
import Glibc

/// A JSON value as Sendable Swift data (what `JSONSerialization` returns as `Any`), with booleans
/// kept apart from numbers. `SesameNetworking` adds `foundationObject`, the value as
/// `JSONSerialization`'s objects.
public enum JSONValue: Hashable, Sendable, CustomStringConvertible, Codable {
    /// A JSON object.
    case object([String: JSONValue])
    /// A JSON array.
    case array([JSONValue])
    /// A JSON string.
    case string(String)
    /// A number without a fraction or exponent that fits in `Int`.
    case integer(Int)
    /// A JSON number.
    case number(Double)
    /// A JSON Boolean.
    case bool(Bool)
    /// JSON `null`.
    case null

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .object(let members): try container.encode(members)
        case .array(let elements): try container.encode(elements)
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }

    /// The member `key` of an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let members) = self { return members[key] }
        return nil
    }

    /// The element at `index` of an array.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let elements) = self, elements.indices.contains(index) { return elements[index] }
        return nil
    }

    /// The string, if this is a string.
    public var stringValue: String? {
        if case .string(let value) = self { return value }
        return nil
    }

    /// The number as an integer, if this is a number with no fractional part that fits in `Int`.
    public var intValue: Int? {
        if case .integer(let value) = self { return value }
        return nil
    }

    /// The number, if this is a number.
    public var doubleValue: Double? {
        switch self {
        case .integer(let value): return Double(value)
        case .number(let value): return value
        default: return nil
        }
    }

    /// The Boolean, if this is a Boolean.
    public var boolValue: Bool? {
        if case .bool(let value) = self { return value }
        return nil
    }

    public var description: String {
        switch self {
        case .object(let members):
            return "{" + members.keys.sorted().map { "\"\($0)\": \(members[$0] ?? .null)" }.joined(separator: ", ")
                + "}"
        case .array(let elements): return "[" + elements.map(\.description).joined(separator: ", ") + "]"
        case .string(let value): return "\"\(value)\""
        case .integer(let value): return String(value)
        case .number(let value): return String(value)
        case .bool(let value): return String(value)
        case .null: return "null"
        }
    }
}
