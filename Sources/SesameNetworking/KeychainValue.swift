import Foundation

/// One attribute value of a keychain item, as Keychain Services types them: text, bytes, a
/// number, a flag or a date. Values arrive from Swift and Foundation types alike (`String` or
/// `NSString`, `Bool` or `kCFBooleanTrue`) and are kept in a store as tagged text.
enum KeychainValue: Hashable {
    case string(String)
    case data(Data)
    case number(Int64)
    case bool(Bool)
    case date(Date)

    /// The value of a query or attribute dictionary entry; nil for a type no attribute has.
    init?(_ given: Any) {
        // `kCFBooleanTrue` is implicitly unwrapped, as on Apple: in an `Any` it arrives wrapped.
        guard let value = Self.unwrapped(given) else { return nil }
        switch value {
        case let text as String: self = .string(text)
        case let text as NSString: self = .string(text as String)
        case let bytes as Data: self = .data(bytes)
        case let bytes as NSData: self = .data(bytes as Data)
        case let date as Date: self = .date(date)
        case let date as NSDate: self = .date(date as Date)
        case let flag as Bool where !(value is NSNumber): self = .bool(flag)
        case let number as NSNumber:
            // Foundation's Booleans are NSNumbers whose type code is a C char.
            if String(cString: number.objCType) == "c", number.int64Value == 0 || number.int64Value == 1 {
                self = .bool(number.boolValue)
            } else {
                self = .number(number.int64Value)
            }
        case let number as any BinaryInteger:
            guard let exact = Int64(exactly: number) else { return nil }
            self = .number(exact)
        default:
            return nil
        }
    }

    private static func unwrapped(_ value: Any) -> Any? {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional else { return value }
        return mirror.children.first.flatMap { unwrapped($0.value) }
    }

    /// The value as Apple returns it in an attribute dictionary.
    var object: AnyObject {
        switch self {
        case .string(let text): text as NSString
        case .data(let bytes): bytes as NSData
        case .number(let number): NSNumber(value: number)
        case .bool(let flag): NSNumber(value: flag)
        case .date(let date): date as NSDate
        }
    }

    var text: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    var integer: Int64? {
        switch self {
        case .number(let number): number
        case .bool(let flag): flag ? 1 : 0
        default: nil
        }
    }

    /// Whether a query's value selects this item's value: the same text (ignoring case when
    /// asked), bytes, date, or number (a flag counts as 1 or 0).
    func matches(_ query: KeychainValue, ignoringCase: Bool) -> Bool {
        switch (self, query) {
        case (.string(let mine), .string(let wanted)):
            ignoringCase ? mine.lowercased() == wanted.lowercased() : mine == wanted
        case (.number, .number), (.number, .bool), (.bool, .number), (.bool, .bool):
            integer == query.integer
        default:
            self == query
        }
    }

    // MARK: - In a store

    /// The value as tagged text: `s:` text, `d:` base64, `n:` integer, `b:` 0 or 1, `t:` seconds
    /// since 1970.
    var stored: String {
        switch self {
        case .string(let text): "s:" + text
        case .data(let bytes): "d:" + bytes.base64EncodedString()
        case .number(let number): "n:\(number)"
        case .bool(let flag): flag ? "b:1" : "b:0"
        case .date(let date): "t:\(date.timeIntervalSince1970)"
        }
    }

    /// A value read back from a store; nil for text no Sesame wrote.
    init?(stored: String) {
        let body = String(stored.dropFirst(2))
        switch stored.prefix(2) {
        case "s:": self = .string(body)
        case "d:":
            guard let bytes = Data(base64Encoded: body) else { return nil }
            self = .data(bytes)
        case "n:":
            guard let number = Int64(body) else { return nil }
            self = .number(number)
        case "b:":
            guard body == "0" || body == "1" else { return nil }
            self = .bool(body == "1")
        case "t:":
            guard let seconds = Double(body), seconds.isFinite else { return nil }
            self = .date(Date(timeIntervalSince1970: seconds))
        default:
            return nil
        }
    }

    static func encode(_ attributes: [String: KeychainValue]) -> [String: String] {
        attributes.mapValues(\.stored)
    }

    /// Attributes read back from a store; nil when any is not Sesame's encoding (the item is
    /// skipped, never guessed at).
    static func decode(_ stored: [String: String]) -> [String: KeychainValue]? {
        var attributes: [String: KeychainValue] = [:]
        for (key, text) in stored {
            guard let value = KeychainValue(stored: text) else { return nil }
            attributes[key] = value
        }
        return attributes
    }
}
