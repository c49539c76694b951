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

    /// The exit code any error deserves, by its cause. `settingUp` is true for errors met before
    /// any request went out (reading the options' files): those are the user's input failing,
    /// exit 1 (or 2 for a usage error, 5 for a client certificate or key), never a network,
    /// trust or authentication code.
    init(_ error: any Error, settingUp: Bool = false) {
        switch error {
        case is Arguments.UsageError:
            self = .usage
        case is FetchConnectionOptions.IdentityError:
            self = .clientCertificate
        case let error as SesameError:
            let code = ExitCode(error)
            self = settingUp ? (code == .usage ? .usage : .failure) : code
        default:
            self = .failure
        }
    }

    /// The exit code for a library error met while fetching.
    init(_ error: SesameError) {
        switch error.code {
        case .nameResolutionFailed, .connectFailed, .connectTimeout, .timeout, .connectionClosed, .connectionReset,
            .ioError, .tlsHandshakeFailed, .proxyConnectFailed:
            self = .network
        case .serverTrustRejected, .trustStoreUnavailable:
            self = .serverTrust
        case .clientCertificateRequired, .clientCertificateRejected:
            self = .clientCertificate
        case .authenticationCancelled, .cleartextCredentialRefused, .unsupportedCredential, .negotiateFailed:
            self = .authentication
        case .proxyAuthenticationFailed:
            self = .proxyAuthentication
        case .protocolError, .streamReset, .tlsProtocolError, .tooManyRedirects:
            self = .protocolError
        case .unsupportedURL, .invalidArgument:
            self = .usage
        default:
            self = .failure
        }
    }
}
