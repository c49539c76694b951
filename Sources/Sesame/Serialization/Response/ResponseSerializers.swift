import FoundationEssentials
import Glibc

/// The body as it came (`AFHTTPResponseSerializer`), after validation.
public struct DataResponseSerializer: ResponseSerializing {
    /// What responses are accepted before the body is returned (by default, status 200–299).
    public var validation = ResponseValidation()
    /// A serializer that returns the body as it came.
    public init() {}
    public func serialize(_ response: HTTPResponse, data: Data) throws -> Data {
        try validation.validate(response, data: data)
        return data
    }
}

/// The body as text. The encoding is, in order: ``overridingEncoding``, the Content-Type's
/// `charset`, ``defaultEncoding``. Bytes that are not valid in it are an error, never garbage.
public struct StringResponseSerializer: ResponseSerializing {
    /// What responses are accepted before the body is decoded (by default, status 200–299).
    public var validation = ResponseValidation()
    /// Used whatever the response says (the seeds' "the server sends GB18030").
    public var overridingEncoding: TextEncoding?
    /// Used when the response names no charset (default UTF-8).
    public var defaultEncoding: TextEncoding = .utf8

    /// A serializer that decodes with `overridingEncoding` if given, else with the response's
    /// `charset`, else with `defaultEncoding`.
    public init(overridingEncoding: TextEncoding? = nil, defaultEncoding: TextEncoding = .utf8) {
        self.overridingEncoding = overridingEncoding
        self.defaultEncoding = defaultEncoding
    }

    public func serialize(_ response: HTTPResponse, data: Data) throws -> String {
        try validation.validate(response, data: data)
        return try Self.decode(data, response: response, overriding: overridingEncoding, default: defaultEncoding)
    }

    static func decode(
        _ data: Data,
        response: HTTPResponse,
        overriding: TextEncoding?,
        default fallback: TextEncoding
    ) throws -> String {
        do {
            let encoding = try overriding ?? response.charset.map(TextEncoding.init(ianaName:)) ?? fallback
            return try encoding.decode([UInt8](data))
        } catch let error as SesameError {
            throw ResponseSerializationError(code: error.code, reason: error.detail, response: response, body: data)
        }
    }
}

/// The body as JSON (`AFJSONResponseSerializer`): accepts `application/json`, `text/json` and
/// `text/javascript`; text in another charset (GB18030, ...) is converted first. An empty body
/// (or a lone space, as Rails sends for `head :ok`) is ``JSONValue/null``.
public struct JSONResponseSerializer: ResponseSerializing {
    /// What responses are accepted before the body is parsed (by default, status 200–299 and a JSON
    /// content type).
    public var validation = ResponseValidation(
        acceptableContentTypes: ["application/json", "text/json", "text/javascript"]
    )
    /// The encoding the body is read in regardless of its `charset`; nil reads the response's
    /// `charset`, else UTF-8.
    public var overridingEncoding: TextEncoding?
    /// Removes object members whose value is null, recursively (`removesKeysWithNullValues`).
    public var removesKeysWithNullValues = false

    /// A serializer that reads the body in `overridingEncoding`, or in the response's `charset`
    /// when it is nil.
    public init(overridingEncoding: TextEncoding? = nil) { self.overridingEncoding = overridingEncoding }

    public func serialize(_ response: HTTPResponse, data: Data) throws -> JSONValue {
        try validation.validate(response, data: data)
        if data.isEmpty || data == Data(" ".utf8) { return .null }
        let utf8 = try Self.utf8(data, response: response, overriding: overridingEncoding)
        do {
            let value = try JSONDecoder().decode(JSONValue.self, from: utf8)
            return removesKeysWithNullValues ? Self.removingNulls(value) : value
        } catch {
            throw ResponseSerializationError(
                code: .responseDecodingFailed,
                reason: "the body is not JSON: \(DecodingErrorText.describe(error))",
                response: response,
                body: data
            )
        }
    }

    /// The body as UTF-8, converted from the response's (or the overriding) charset.
    static func utf8(_ data: Data, response: HTTPResponse, overriding: TextEncoding?) throws -> Data {
        let named = try? response.charset.map(TextEncoding.init(ianaName:))
        guard let encoding = overriding ?? named ?? nil, encoding != .utf8 else { return data }
        let text = try StringResponseSerializer.decode(data, response: response, overriding: encoding, default: .utf8)
        return Data(text.utf8)
    }

    static func removingNulls(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members): return .object(members.filter { $0.value != .null }.mapValues(removingNulls))
        case .array(let elements): return .array(elements.map(removingNulls))
        default: return value
        }
    }
}

/// The body decoded as `Value` with `JSONDecoder`; a failure names the path to the bad value.
public struct DecodableResponseSerializer<Value: Decodable & Sendable>: ResponseSerializing {
    /// What responses are accepted before the body is decoded (by default, status 200–299 and a
    /// JSON content type).
    public var validation = ResponseValidation(
        acceptableContentTypes: ["application/json", "text/json", "text/javascript"]
    )
    /// The encoding the body is read in regardless of its `charset`; nil reads the response's
    /// `charset`, else UTF-8.
    public var overridingEncoding: TextEncoding?
    private let makeDecoder: @Sendable () -> JSONDecoder

    /// A serializer that decodes `type` with `decoder`, from the body read in `overridingEncoding`
    /// or its `charset`.
    public init(
        _ type: Value.Type = Value.self,
        overridingEncoding: TextEncoding? = nil,
        decoder: @escaping @Sendable () -> JSONDecoder = { JSONDecoder() }
    ) {
        self.overridingEncoding = overridingEncoding
        self.makeDecoder = decoder
    }

    public func serialize(_ response: HTTPResponse, data: Data) throws -> Value {
        try validation.validate(response, data: data)
        let utf8 = try JSONResponseSerializer.utf8(data, response: response, overriding: overridingEncoding)
        do {
            return try makeDecoder().decode(Value.self, from: utf8)
        } catch {
            throw ResponseSerializationError(
                code: .responseDecodingFailed,
                reason: "cannot decode \(Value.self): \(DecodingErrorText.describe(error))",
                response: response,
                body: data
            )
        }
    }
}

/// What a ``CompoundResponseSerializer`` produced.
public enum SerializedBody: Sendable, Hashable {
    /// The body parsed as JSON.
    case json(JSONValue)
    /// The body decoded as text.
    case string(String)
    /// The body as it came.
    case data(Data)
}

/// Tries JSON, then text, then (optionally) the raw bytes (AFNetworking's
/// `AFCompoundResponseSerializer`): the first that succeeds wins; when none does, the first one's
/// error is thrown.
public struct CompoundResponseSerializer: ResponseSerializing {
    /// The serializer tried first.
    public var json = JSONResponseSerializer()
    /// The serializer tried when the JSON one refuses the response.
    public var string = StringResponseSerializer()
    /// Whether bytes that are neither JSON nor valid text are returned as they are.
    public var fallsBackToData = false

    /// A serializer that tries JSON, then text, then (when `fallsBackToData` is true) the bytes as
    /// they came.
    public init(fallsBackToData: Bool = false) { self.fallsBackToData = fallsBackToData }

    public func serialize(_ response: HTTPResponse, data: Data) throws -> SerializedBody {
        let first: any Error
        do {
            return .json(try json.serialize(response, data: data))
        } catch {
            first = error
        }
        if let text = try? string.serialize(response, data: data) { return .string(text) }
        if fallsBackToData, (try? string.validation.validate(response, data: data)) != nil { return .data(data) }
        throw first
    }
}

/// `DecodingError` as a sentence with the coding path ("at user.id: expected Int, found a string").
enum DecodingErrorText {
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let components = context.codingPath.map { key in key.intValue.map { "[\($0)]" } ?? ".\(key.stringValue)" }
            let joined = components.joined()
            return joined.isEmpty ? "the top level" : String(joined.drop { $0 == "." })
        }
        switch error {
        case .typeMismatch(let type, let context):
            return "at \(path(context)): expected \(type): \(context.debugDescription)"
        case .valueNotFound(let type, let context):
            return "at \(path(context)): expected \(type), found null: \(context.debugDescription)"
        case .keyNotFound(let key, let context):
            let parent = path(context)
            return
                "at \(parent == "the top level" ? "" : parent + "."  )\(key.stringValue): missing: \(context.debugDescription)"
        case .dataCorrupted(let context):
            return "at \(path(context)): \(context.debugDescription)"
        @unknown default:
            return "\(error)"
        }
    }
}
