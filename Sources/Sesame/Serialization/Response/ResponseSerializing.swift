import FoundationEssentials
import Glibc

/// Turns a response and its body into a value (AFNetworking's response serializers).
public protocol ResponseSerializing<Output>: Sendable {
    /// What the serializer makes of a response.
    associatedtype Output: Sendable
    /// Validates `response` and converts `data`.
    /// - Throws: ``ResponseSerializationError`` carrying the response and the body.
    func serialize(_ response: HTTPResponse, data: Data) throws -> Output
}

/// Why a response could not be serialized, with the response and body for diagnosis.
public struct ResponseSerializationError: Error, Sendable, CustomStringConvertible {
    /// ``SesameError/Code/responseValidationFailed``, ``SesameError/Code/textDecodingFailed`` or
    /// ``SesameError/Code/responseDecodingFailed``.
    public let code: SesameError.Code
    /// What was wrong, for people (for `Decodable`, with the coding path).
    public let reason: String
    /// The response that was refused.
    public let response: HTTPResponse
    /// The body of the refused response, for the caller to inspect (an error page, a problem
    /// document).
    public let body: Data

    public var description: String { "\(code): \(reason) (HTTP \(response.status), \(body.count) body bytes)" }
}

/// The status codes and content types a serializer accepts (AFNetworking's
/// `acceptableStatusCodes` and `acceptableContentTypes`).
public struct ResponseValidation: Sendable, Hashable {
    /// nil: any status.
    public var acceptableStatusCodes: Set<Int>? = Set(200..<300)
    /// Media types without parameters, lowercased (`application/json`); nil: any, and a missing
    /// Content-Type too.
    public var acceptableContentTypes: Set<String>?

    /// A validation accepting these status codes and content types; nil accepts any.
    public init(acceptableStatusCodes: Set<Int>? = Set(200..<300), acceptableContentTypes: Set<String>? = nil) {
        self.acceptableStatusCodes = acceptableStatusCodes
        self.acceptableContentTypes = acceptableContentTypes
    }

    /// Returns when `response` is acceptable; throws ``ResponseSerializationError`` naming the
    /// status or content type that is not.
    public func validate(_ response: HTTPResponse, data: Data) throws {
        if let codes = acceptableStatusCodes, !codes.contains(response.status) {
            throw ResponseSerializationError(
                code: .responseValidationFailed,
                reason: "unacceptable status code \(response.status) \(response.reason)",
                response: response,
                body: data
            )
        }
        if let types = acceptableContentTypes, !data.isEmpty {
            let type = response.mediaType
            guard let type, types.contains(type) else {
                throw ResponseSerializationError(
                    code: .responseValidationFailed,
                    reason:
                        "unacceptable content type \(type ?? "(none)"); expected \(types.sorted().joined(separator: ", "))",
                    response: response,
                    body: data
                )
            }
        }
    }
}

extension HTTPResponse {
    /// The Content-Type's media type, lowercased, without parameters.
    public var mediaType: String? {
        guard let value = headers["Content-Type"] else { return nil }
        let type = value.split(separator: ";", maxSplits: 1).first.map { $0.trimmingWhitespace() }
        return type.flatMap { $0.isEmpty ? nil : $0.lowercased() }
    }

    /// The Content-Type's `charset` parameter, unquoted, if any.
    public var charset: String? {
        guard let value = headers["Content-Type"] else { return nil }
        for parameter in value.split(separator: ";").dropFirst() {
            let parts = parameter.split(separator: "=", maxSplits: 1).map { $0.trimmingWhitespace() }
            if parts.count == 2, parts[0].lowercased() == "charset" {
                return parts[1].trimming(["\""])
            }
        }
        return nil
    }
}
