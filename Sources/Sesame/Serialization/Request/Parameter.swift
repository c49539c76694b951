import FoundationEssentials
import Glibc

/// A request parameter value: what AFNetworking takes as `NSDictionary`/`NSArray`/`NSString`/
/// `NSNumber`/`NSNull`, as a Sendable value with literals.
///
/// ```swift
/// let parameters: [String: Parameter] = ["q": "中文", "page": 2, "tags": ["a", "b"], "user": ["id": 7]]
/// ```
public enum Parameter: Hashable, Sendable {
    /// A string.
    case string(String)
    /// An integer.
    case integer(Int)
    /// A floating-point number.
    case double(Double)
    /// A Boolean (in a query, `1` or `0`, as AFNetworking writes it).
    case bool(Bool)
    /// An array (in a query, `name[]=a&name[]=b`).
    case array([Parameter])
    /// A dictionary (in a query, `name[key]=value`, keys sorted).
    case dictionary([String: Parameter])
    /// A key without a value (`key` alone in a query; `null` in JSON).
    case null

    /// The text of a scalar in a query or form (booleans as 1 and 0, as `NSNumber` prints them).
    var queryText: String? {
        switch self {
        case .string(let value): return value
        case .integer(let value): return String(value)
        case .double(let value):
            return value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(value)
        case .bool(let value): return value ? "1" : "0"
        case .array, .dictionary, .null: return nil
        }
    }
}

/// JSON as `JSONRequestSerializer` writes it: numbers as numbers, Booleans as `true`/`false`,
/// `null` for ``Parameter/null``.
extension Parameter: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .double(let value): try container.encode(value)
        case .bool(let value): try container.encode(value)
        case .array(let values): try container.encode(values)
        case .dictionary(let values): try container.encode(values)
        case .null: try container.encodeNil()
        }
    }
}

extension Parameter: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    public init(stringLiteral value: String) { self = .string(value) }
    public init(integerLiteral value: Int) { self = .integer(value) }
    public init(floatLiteral value: Double) { self = .double(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(arrayLiteral elements: Parameter...) { self = .array(elements) }
    public init(dictionaryLiteral elements: (String, Parameter)...) {
        self = .dictionary(Dictionary(elements) { _, last in last })
    }
    public init(nilLiteral: ()) { self = .null }
}
