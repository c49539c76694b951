import Foundation
import Sesame

extension JSONValue {
    /// The value as `JSONSerialization` objects (`[String: Any]`, `[Any]`, `String`, `NSNumber`, `NSNull`).
    public var foundationObject: Any {
        switch self {
        case .object(let members): return members.mapValues(\.foundationObject)
        case .array(let elements): return elements.map(\.foundationObject)
        case .string(let value): return value
        case .integer(let value): return NSNumber(value: value)
        case .number(let value): return NSNumber(value: value)
        case .bool(let value): return NSNumber(value: value)
        case .null: return NSNull()
        }
    }
}
