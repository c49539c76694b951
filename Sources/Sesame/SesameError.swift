/// An error from Sesame.
///
/// Errors compare and hash by ``code`` only, so new codes and richer details can be added without
/// breaking callers. ``description`` carries the detail (the file, host or reason);
/// ``shortDescription`` is the code alone, safe for logs. No secret (password, key material,
/// header value) is ever put into an error.
public struct SesameError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What went wrong, as a stable, comparable value.
    public struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Base: String, Hashable, Sendable {
            case fileUnreadable = "file unreadable"
            case fileTooLarge = "file too large"
            case invalidCertificate = "invalid certificate"
            case invalidPrivateKey = "invalid private key"
            case invalidPKCS12 = "invalid PKCS#12"
            case wrongPassword = "wrong password"
            case keyMismatch = "private key does not match certificate"
            case unsupportedAlgorithm = "unsupported algorithm"
            case invalidArgument = "invalid argument"
            case nameResolutionFailed = "name resolution failed"
            case connectFailed = "connect failed"
            case connectTimeout = "connect timed out"
            case timeout = "timed out"
            case connectionClosed = "connection closed"
            case connectionReset = "connection reset"
            case ioError = "I/O error"
            case tlsHandshakeFailed = "TLS handshake failed"
            case serverTrustRejected = "server trust rejected"
            case clientCertificateRequired = "client certificate required"
            case clientCertificateRejected = "client certificate rejected"
            case tlsProtocolError = "TLS protocol error"
            case trustStoreUnavailable = "trust store unavailable"
            case cancelled = "cancelled"
            case eventLoopShutDown = "event loop shut down"
            case protocolError = "HTTP protocol error"
            case streamReset = "HTTP/2 stream reset"
            case tooManyRedirects = "too many redirects"
            case unsupportedURL = "unsupported URL"
            case authenticationCancelled = "authentication cancelled"
            case cleartextCredentialRefused = "credential refused over cleartext"
            case unsupportedCredential = "unsupported credential"
            case credentialStoreCorrupt = "credential store corrupt"
            case credentialStoreFailed = "credential store failed"
            case credentialStoreLocked = "credential store locked"
            case credentialStoreUnavailable = "credential store unavailable"
            case netrcInvalid = "netrc invalid"
            case serverAuthenticationFailed = "server authentication failed"
            case negotiateFailed = "Negotiate failed"
            case proxyAuthenticationFailed = "proxy authentication failed"
            case proxyConnectFailed = "proxy CONNECT failed"
            case textEncodingFailed = "text encoding failed"
            case textDecodingFailed = "text decoding failed"
            case responseValidationFailed = "response validation failed"
            case responseDecodingFailed = "response decoding failed"
            case cookieJarInvalid = "cookie jar invalid"
            case internalError = "internal error"
        }
        private let base: Base
        private init(_ base: Base) { self.base = base }

        public var description: String { base.rawValue }

        /// A file could not be opened or read, or is not a regular file (a FIFO, a device, a
        /// folder).
        public static let fileUnreadable = Code(.fileUnreadable)
        /// A file holds more than its kind may (``UserFile/Kind/sizeLimit``).
        public static let fileTooLarge = Code(.fileTooLarge)
        /// Bytes that should hold a certificate do not (truncated, not DER/PEM, not a certificate).
        public static let invalidCertificate = Code(.invalidCertificate)
        /// Bytes that should hold a private key do not.
        public static let invalidPrivateKey = Code(.invalidPrivateKey)
        /// A PKCS#12 file is malformed or holds no usable identity.
        public static let invalidPKCS12 = Code(.invalidPKCS12)
        /// The password for a PKCS#12 file or an encrypted key is wrong (or missing).
        public static let wrongPassword = Code(.wrongPassword)
        /// A private key does not belong to the certificate it was paired with.
        public static let keyMismatch = Code(.keyMismatch)
        /// An algorithm the OpenSSL build cannot provide.
        public static let unsupportedAlgorithm = Code(.unsupportedAlgorithm)
        /// An argument is out of range or malformed.
        public static let invalidArgument = Code(.invalidArgument)
        /// The host name did not resolve.
        public static let nameResolutionFailed = Code(.nameResolutionFailed)
        /// No TCP connection could be made to any resolved address.
        public static let connectFailed = Code(.connectFailed)
        /// The TCP connection was not made within the connect timeout.
        public static let connectTimeout = Code(.connectTimeout)
        /// An operation (such as the TLS handshake) did not finish in time.
        public static let timeout = Code(.timeout)
        /// The peer closed the connection before the operation finished.
        public static let connectionClosed = Code(.connectionClosed)
        /// The peer reset the connection.
        public static let connectionReset = Code(.connectionReset)
        /// A socket call failed.
        public static let ioError = Code(.ioError)
        /// The TLS handshake failed for a reason other than trust or client certificates.
        public static let tlsHandshakeFailed = Code(.tlsHandshakeFailed)
        /// The server's certificate chain was not trusted (by evaluation or by the delegate).
        public static let serverTrustRejected = Code(.serverTrustRejected)
        /// The server requires a client certificate and none was sent.
        public static let clientCertificateRequired = Code(.clientCertificateRequired)
        /// The server rejected the client certificate that was sent.
        public static let clientCertificateRejected = Code(.clientCertificateRejected)
        /// The TLS peer violated the protocol or sent an alert after the handshake.
        public static let tlsProtocolError = Code(.tlsProtocolError)
        /// The system trust store could not be loaded.
        public static let trustStoreUnavailable = Code(.trustStoreUnavailable)
        /// The operation was cancelled.
        public static let cancelled = Code(.cancelled)
        /// Sesame reached a state it should never reach (a bug in Sesame); the detail names it.
        public static let internalError = Code(.internalError)
        /// The event loop the operation needed has shut down.
        public static let eventLoopShutDown = Code(.eventLoopShutDown)
        /// The server's HTTP response was malformed or exceeded a limit; the detail names what.
        public static let protocolError = Code(.protocolError)
        /// The server ended the request's HTTP/2 stream (RST_STREAM) before the response was
        /// complete; the detail names the error code. The connection and its other streams go on.
        public static let streamReset = Code(.streamReset)
        /// More redirects than the configured limit.
        public static let tooManyRedirects = Code(.tooManyRedirects)
        /// The URL is not an absolute `http` or `https` URL with a host.
        public static let unsupportedURL = Code(.unsupportedURL)
        /// A challenge delegate answered `cancelAuthenticationChallenge`.
        public static let authenticationCancelled = Code(.authenticationCancelled)
        /// A credential would have been sent in a form readable on the wire (Basic over `http`)
        /// and the configuration does not allow that.
        public static let cleartextCredentialRefused = Code(.cleartextCredentialRefused)
        /// A delegate answered a challenge with a kind of credential that cannot answer it
        /// (a certificate for a password challenge, a password for an unknown scheme, ...).
        public static let unsupportedCredential = Code(.unsupportedCredential)
        /// The credential store file is not in a format Sesame can read; it was left as it was.
        public static let credentialStoreCorrupt = Code(.credentialStoreCorrupt)
        /// The credential store could not be read, locked or written (permissions, disk full, ...).
        public static let credentialStoreFailed = Code(.credentialStoreFailed)
        /// The keyring holding the credential store is locked and was not unlocked (its unlock
        /// prompt was dismissed or could not be shown).
        public static let credentialStoreLocked = Code(.credentialStoreLocked)
        /// The credential store chosen cannot be reached: libsecret is not installed, there is no
        /// session bus, or no Secret Service provider answers on it.
        public static let credentialStoreUnavailable = Code(.credentialStoreUnavailable)
        /// A `.netrc` file could not be read or parsed.
        public static let netrcInvalid = Code(.netrcInvalid)
        /// The server answered a Digest request with a wrong `rspauth`, or a Negotiate request with
        /// a final token that does not verify: it did not prove that it knows the password (or
        /// holds its Kerberos key), so its response is not trusted.
        public static let serverAuthenticationFailed = Code(.serverAuthenticationFailed)
        /// A Negotiate (Kerberos) answer could not be made: GSSAPI is not installed, there is no
        /// ticket, the KDC refused the password, or it does not know the server's principal. The
        /// detail carries GSSAPI's own words.
        public static let negotiateFailed = Code(.negotiateFailed)
        /// A proxy answered a `CONNECT` with 407 and no credential it accepted could be sent
        /// (none was found, the ones sent were refused up to the failure limit, or its schemes
        /// cannot be answered).
        public static let proxyAuthenticationFailed = Code(.proxyAuthenticationFailed)
        /// A proxy refused to open a `CONNECT` tunnel for another reason (403, 502, ...), or does not
        /// speak HTTP.
        public static let proxyConnectFailed = Code(.proxyConnectFailed)
        /// A string has a character the chosen text encoding cannot represent.
        public static let textEncodingFailed = Code(.textEncodingFailed)
        /// Bytes are not valid text in the chosen (or announced) encoding.
        public static let textDecodingFailed = Code(.textDecodingFailed)
        /// A response's status code or content type is not one the serializer accepts.
        public static let responseValidationFailed = Code(.responseValidationFailed)
        /// A response body could not be turned into the requested value (JSON, `Decodable`).
        public static let responseDecodingFailed = Code(.responseDecodingFailed)
        /// A cookie file is not in the Netscape format curl reads and writes.
        public static let cookieJarInvalid = Code(.cookieJarInvalid)
    }

    /// What went wrong.
    public let code: Code
    /// Detail for people: the file, host or underlying reason. Never holds a secret.
    public let detail: String
    let fileID: String
    let line: UInt

    package init(_ code: Code, _ detail: String, fileID: String = #fileID, line: UInt = #line) {
        self.code = code
        self.detail = detail
        self.fileID = fileID
        self.line = line
    }

    /// The code alone, without payload: safe for logs.
    public var shortDescription: String { "SesameError.\(code)" }

    public var description: String { detail.isEmpty ? "\(code)" : "\(code): \(detail)" }

    public static func == (lhs: SesameError, rhs: SesameError) -> Bool { lhs.code == rhs.code }
    public func hash(into hasher: inout Hasher) { hasher.combine(code) }
}
