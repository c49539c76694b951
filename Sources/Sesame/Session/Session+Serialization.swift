import FoundationEssentials
import Glibc

extension Session {
    /// Sends `request` and turns the response into a value with `serializer` (AFNetworking's
    /// `responseSerializer`): `let (user, _) = try await session.data(for: request, serializer:
    /// DecodableResponseSerializer(User.self))`.
    /// - Throws: ``SesameError`` for the exchange, ``ResponseSerializationError`` (with the
    ///   response and body) for the conversion.
    public func data<Serializer: ResponseSerializing>(
        for request: HTTPRequest,
        serializer: Serializer,
        delegate: (any SessionTaskDelegate)? = nil
    ) async throws -> (Serializer.Output, HTTPResponse) {
        let (data, response) = try await data(for: request, delegate: delegate)
        return (try serializer.serialize(response, data: data), response)
    }
}
