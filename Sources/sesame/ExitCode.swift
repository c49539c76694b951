import Sesame

/// The process exit codes of `sesame` (documented in `sesame --help`).
enum ExitCode: Int32 {
    case ok = 0
    case failure = 1
    case usage = 2
    case network = 3
    case serverTrust = 4
    case clientCertificate = 5
    case authentication = 6
    case proxyAuthentication = 7
    case httpError = 8
    case protocolError = 9

    /// The exit code for an error met before any request went out (reading the options' files):
    /// a usage error, or a failure of the input (exit 1), never a network, trust or
    /// authentication code.
    init(setUpError error: SesameError) {
        self = ExitCode(error) == .usage ? .usage : .failure
    }

    /// The exit code for a library error.
    init(_ error: SesameError) {
        switch error.code {
        case .nameResolutionFailed, .connectFailed, .connectTimeout, .timeout, .connectionClosed, .connectionReset,
            .ioError, .tlsHandshakeFailed, .proxyConnectFailed:
            self = .network
        case .serverTrustRejected, .trustStoreUnavailable:
            self = .serverTrust
        case .clientCertificateRequired, .clientCertificateRejected:
            self = .clientCertificate
        case .authenticationCancelled, .cleartextCredentialRefused, .unsupportedCredential:
            self = .authentication
        case .proxyAuthenticationFailed:
            self = .proxyAuthentication
        case .protocolError, .tlsProtocolError, .tooManyRedirects:
            self = .protocolError
        case .unsupportedURL, .invalidArgument:
            self = .usage
        default:
            self = .failure
        }
    }
}
