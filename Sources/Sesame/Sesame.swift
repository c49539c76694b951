internal import CSesameShims

/// Version information.
public enum Sesame {
    /// The Sesame library version.
    public static let version = "0.1.0"
    /// The OpenSSL library Sesame runs on, e.g. "OpenSSL 3.0.19 27 Jan 2026".
    public static var openSSLVersion: String { String(cString: CSesameShims_OpenSSL_version_text()) }
}
