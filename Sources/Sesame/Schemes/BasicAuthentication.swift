import FoundationEssentials
import Glibc

/// HTTP Basic (RFC 7617): `Basic base64(user ":" password)`, always in UTF-8 (the only charset
/// RFC 7617 lets a server ask for, and what nginx and Apache compare byte for byte).
public enum BasicAuthentication {
    /// The `Authorization` (or `Proxy-Authorization`) value for `user` and `password`.
    /// - Throws: ``SesameError/Code/unsupportedCredential`` when the user name contains a colon or
    ///   either part contains a control character (RFC 7617 section 2 forbids both).
    public static func authorization(user: String, password: String) throws -> String {
        guard !user.utf8.contains(UInt8(ascii: ":")) else {
            throw SesameError(.unsupportedCredential, "a Basic user name cannot contain ':'")
        }
        let hasControl = { (text: String) in text.unicodeScalars.contains { $0.properties.generalCategory == .control }
        }
        guard !hasControl(user), !hasControl(password) else {
            throw SesameError(.unsupportedCredential, "a Basic user name or password cannot contain control characters")
        }
        return "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
    }
}
