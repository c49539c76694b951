import Sesame

/// AFNetworking's `AFQueryStringFromParameters` over Foundation values: dictionary keys sorted by
/// their description, nested as `key[sub]`, arrays as `key[]`, sets as repeated `key` in sorted
/// order, `NSNull` as the bare key, anything else by its description; every byte of the text in
/// `encoding` percent-encoded except RFC 3986's unreserved characters and `/` and `?`.
enum AFQueryString {
    /// One `field=value` pair before escaping; a nil value is the bare field.
    struct Pair {
        let field: String
        let value: Value?

        enum Value {
            case text(String)
            case data(Data)
        }
    }

    /// Nesting deeper than this is refused rather than recursed into (a cyclic NSDictionary).
    static let maximumDepth = 64

    private static let unescaped = Set(
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/?".utf8
    )

    static func query(_ parameters: Any, encoding: TextEncoding) throws -> String {
        try pairs(parameters).map { pair in
            let field = try encoding.percentEncoded(pair.field, keeping: "/?")
            switch pair.value {
            case nil: return field
            case .text(let text)?: return field + "=" + (try encoding.percentEncoded(text, keeping: "/?"))
            case .data(let data)?:
                // Bytes are sent as they are, escaped byte by byte.
                let escaped = data.map { byte -> String in
                    unescaped.contains(byte) ? String(UnicodeScalar(byte)) : String(format: "%%%02X", byte)
                }.joined()
                return field + "=" + escaped
            }
        }.joined(separator: "&")
    }

    /// The flattened pairs of a parameter object (a dictionary at the top, as AFNetworking takes).
    static func pairs(_ parameters: Any) throws -> [Pair] {
        // AFNetworking writes a top-level array as `(null)[]=…`: refuse it instead.
        guard dictionary(unwrapped(parameters)) != nil else {
            throw AFRequestError.invalidParameters(
                "query and form parameters must be a dictionary, not \(type(of: parameters)) (\(String(describing: parameters).prefix(60)))"
            )
        }
        var result: [Pair] = []
        try flatten(key: nil, value: parameters, depth: 0, into: &result)
        return result
    }

    private static func flatten(key: String?, value: Any, depth: Int, into pairs: inout [Pair]) throws {
        let value = unwrapped(value)
        guard depth <= maximumDepth else {
            throw AFRequestError.invalidParameters("the parameters nest deeper than \(maximumDepth) levels")
        }
        if let dictionary = dictionary(value) {
            for (nestedKey, nestedValue) in dictionary.sorted(by: { $0.key < $1.key }) {
                let field = key.map { "\($0)[\(nestedKey)]" } ?? nestedKey
                try flatten(key: field, value: nestedValue, depth: depth + 1, into: &pairs)
            }
        } else if let array = array(value) {
            for element in array {
                try flatten(key: "\(key ?? "")[]", value: element, depth: depth + 1, into: &pairs)
            }
        } else if let set = set(value) {
            for element in set.sorted(by: { description(of: $0) < description(of: $1) }) {
                try flatten(key: key, value: element, depth: depth + 1, into: &pairs)
            }
        } else {
            guard let key else {
                throw AFRequestError.invalidParameters(
                    "query parameters must be a dictionary, not \(type(of: value)) (\(String(describing: value).prefix(60)))"
                )
            }
            pairs.append(Pair(field: key, value: scalar(value)))
        }
    }

    /// A scalar's text as AFNetworking writes it (`-description`); nil for `NSNull` and `nil`.
    private static func scalar(_ value: Any) -> Pair.Value? {
        if isNull(value) { return nil }
        if let data = value as? Data { return .data(data) }
        if let data = value as? NSData { return .data(data as Data) }
        return .text(description(of: value))
    }

    static func description(of value: Any) -> String {
        switch value {
        case let string as String: return string
        case let bool as Bool: return bool ? "1" : "0"
        case let number as NSNumber: return number.description
        case let url as URL: return url.absoluteString
        default: return String(describing: value)
        }
    }

    /// `NSNull`, or an optional holding nothing.
    static func isNull(_ value: Any) -> Bool {
        if value is NSNull { return true }
        let mirror = Mirror(reflecting: value)
        return mirror.displayStyle == .optional && mirror.children.isEmpty
    }

    /// The value inside an optional that holds one (`[String: Any]` built from optionals).
    static func unwrapped(_ value: Any) -> Any {
        let mirror = Mirror(reflecting: value)
        guard mirror.displayStyle == .optional, let inner = mirror.children.first else { return value }
        return unwrapped(inner.value)
    }

    static func dictionary(_ value: Any) -> [String: Any]? {
        if let dictionary = value as? [String: Any] { return dictionary }
        if let dictionary = value as? [AnyHashable: Any] {
            return Dictionary(dictionary.map { (description(of: $0.key.base), $0.value) }) { first, _ in first }
        }
        if let dictionary = value as? NSDictionary {
            var result: [String: Any] = [:]
            for (key, element) in dictionary { result[description(of: key)] = element }
            return result
        }
        return nil
    }

    static func array(_ value: Any) -> [Any]? {
        if value is String || value is Data { return nil }
        if let array = value as? [Any] { return array }
        if let array = value as? NSArray { return array.map { $0 } }
        return nil
    }

    static func set(_ value: Any) -> [Any]? {
        if let set = value as? Set<AnyHashable> { return set.map(\.base) }
        if let set = value as? NSSet { return set.allObjects }
        return nil
    }
}

/// Request serialization failures, as AFNetworking reports them.
enum AFRequestError {
    static func invalidParameters(_ reason: String) -> NSError {
        NSError(
            domain: AFURLRequestSerializationErrorDomain,
            code: NSURLErrorCannotDecodeContentData,
            userInfo: [
                NSLocalizedDescriptionKey: "The parameters could not be serialized: \(reason)",
                NSLocalizedFailureReasonErrorKey: reason,
            ]
        )
    }

    static func badURL(_ string: String) -> NSError {
        NSError(
            domain: AFURLRequestSerializationErrorDomain,
            code: NSURLErrorBadURL,
            userInfo: [
                NSLocalizedDescriptionKey: "'\(string)' is not a URL",
                NSLocalizedFailureReasonErrorKey: "The URL string could not be parsed.",
            ]
        )
    }

    /// A Sesame error (an encoding without a character, a bad part) in AFNetworking's domain.
    static func from(_ error: any Error, request: URLRequest? = nil) -> NSError {
        if let error = error as NSError?, error.domain == AFURLRequestSerializationErrorDomain { return error }
        var userInfo: [String: Any] = [
            NSLocalizedDescriptionKey: "The request could not be serialized: \(error)",
            NSLocalizedFailureReasonErrorKey: "\(error)",
            NSUnderlyingErrorKey: error as NSError,
        ]
        if let request { userInfo[AFNetworkingOperationFailingURLRequestErrorKey] = request }
        return NSError(
            domain: AFURLRequestSerializationErrorDomain,
            code: NSURLErrorCannotDecodeContentData,
            userInfo: userInfo
        )
    }
}
