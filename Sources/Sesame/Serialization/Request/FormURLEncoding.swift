import FoundationEssentials
import Glibc

/// `application/x-www-form-urlencoded` and query strings with AFNetworking's rules: dictionary
/// keys sorted, nested as `key[sub]`, arrays as `key[]`, a null value as the bare key; every byte
/// of the chosen text encoding percent-encoded except RFC 3986's unreserved characters and the
/// `/` and `?` a query may hold.
enum FormURLEncoding {
    /// The query string (without `?`) for `parameters`.
    static func query(_ parameters: [String: Parameter], encoding: TextEncoding) throws -> String {
        var pairs: [(String, String?)] = []
        for key in parameters.keys.sorted() {
            if let value = parameters[key] { flatten(key: key, value: value, into: &pairs) }
        }
        return try pairs.map { field, value in
            let escapedField = try escape(field, encoding)
            guard let value else { return escapedField }
            return escapedField + "=" + (try escape(value, encoding))
        }.joined(separator: "&")
    }

    private static func flatten(key: String, value: Parameter, into pairs: inout [(String, String?)]) {
        switch value {
        case .dictionary(let values):
            for nested in values.keys.sorted() {
                if let nestedValue = values[nested] {
                    flatten(key: "\(key)[\(nested)]", value: nestedValue, into: &pairs)
                }
            }
        case .array(let values):
            for element in values { flatten(key: "\(key)[]", value: element, into: &pairs) }
        case .null:
            pairs.append((key, nil))
        default:
            pairs.append((key, value.queryText ?? ""))
        }
    }

    /// Percent-encodes `text` written in `encoding`.
    static func escape(_ text: String, _ encoding: TextEncoding) throws -> String {
        try encoding.percentEncoded(text, keeping: "/?")
    }
}

extension TextEncoding {
    private static let unreserved: Set<UInt8> = Set(
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
    )

    /// `text` written in this encoding, every byte percent-encoded except RFC 3986's unreserved
    /// characters and the ASCII characters in `keeping`.
    /// - Throws: ``SesameError/Code/textEncodingFailed`` for a character the encoding lacks.
    public func percentEncoded(_ text: String, keeping: String = "") throws -> String {
        let kept = Self.unreserved.union(keeping.utf8)
        var result = ""
        for byte in try encode(text) {
            if kept.contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += HexDigits.percentEscape(byte)
            }
        }
        return result
    }
}
