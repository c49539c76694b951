import Foundation
import Sesame

// `URLResponse` and `HTTPURLResponse` are FoundationNetworking's (MIME type and charset parsing,
// `suggestedFilename` from `Content-Disposition`, NSSecureCoding); here is how Sesame's response
// becomes one.

extension HTTPURLResponse {
    /// The response Sesame received, with repeated fields joined as Apple joins them (a comma and
    /// a space; `HTTPCookie.cookies(withResponseHeaderFields:for:)` splits `Set-Cookie` again).
    static func make(_ response: HTTPResponse) -> HTTPURLResponse {
        var fields: [String: String] = [:]
        var names: [String: String] = [:]
        for field in response.headers {
            let key = field.name.lowercased()
            if let name = names[key], let existing = fields[name] {
                fields[name] = existing + ", " + field.value
            } else {
                names[key] = field.name
                fields[field.name] = field.value
            }
        }
        guard
            let made = HTTPURLResponse(
                url: response.url,
                statusCode: response.status,
                httpVersion: response.version,
                headerFields: fields
            )
        else { preconditionFailure("FoundationNetworking's HTTPURLResponse initializer never fails") }
        return made
    }
}
