import Foundation
import Sesame

extension URLError.Code {
    /// Apple's code for what went wrong in Sesame.
    init(_ error: SesameError) {
        switch error.code {
        case .cancelled, .authenticationCancelled: self = .cancelled
        case .timeout, .connectTimeout: self = .timedOut
        case .nameResolutionFailed: self = .cannotFindHost
        case .connectFailed, .proxyConnectFailed: self = .cannotConnectToHost
        case .connectionClosed, .connectionReset, .ioError, .streamReset: self = .networkConnectionLost
        case .tooManyRedirects: self = .httpTooManyRedirects
        case .unsupportedURL: self = .unsupportedURL
        case .serverTrustRejected, .trustStoreUnavailable: self = .serverCertificateUntrusted
        case .clientCertificateRequired: self = .clientCertificateRequired
        case .clientCertificateRejected: self = .clientCertificateRejected
        case .tlsHandshakeFailed, .tlsProtocolError: self = .secureConnectionFailed
        case .protocolError, .serverAuthenticationFailed: self = .badServerResponse
        case .proxyAuthenticationFailed, .cleartextCredentialRefused, .unsupportedCredential, .negotiateFailed:
            self = .userAuthenticationRequired
        case .responseDecodingFailed, .textDecodingFailed: self = .cannotDecodeContentData
        case .fileUnreadable: self = .cannotOpenFile
        default: self = .unknown
        }
    }
}

extension URLError {
    /// The error a URLSession reports for `error` on a request to `url`, in `NSURLErrorDomain`
    /// with `NSURLErrorFailingURLErrorKey`, Sesame's description, and the Sesame error underneath.
    static func from(_ error: any Error, url: URL?) -> any Error {
        if let error = error as? URLError { return error }
        let sesame = error as? SesameError
        let code: URLError.Code = sesame.map(URLError.Code.init) ?? (error is CancellationError ? .cancelled : .unknown)
        let detail = sesame?.description ?? "\(error)"
        // Foundation's words where apps show or compare them; Sesame's account of the cause as
        // the failure reason (and the underlying error).
        var info: [String: Any] = [
            NSLocalizedDescriptionKey: foundationDescription(code, host: url?.host) ?? detail,
            NSLocalizedFailureReasonErrorKey: detail,
        ]
        if let url {
            info[NSURLErrorFailingURLErrorKey] = url
            // NSURLErrorFailingURLStringErrorKey, by its value (the name is deprecated).
            info["NSErrorFailingURLStringKey"] = url.absoluteString
        }
        info[NSUnderlyingErrorKey] = NSError(
            domain: "Sesame",
            code: 0,
            userInfo: [NSLocalizedDescriptionKey: "\(error)"]
        )
        return URLError(code, userInfo: info)
    }

    /// What Apple's URL loading system says for `code` (nil where Sesame's own words say more).
    static func foundationDescription(_ code: URLError.Code, host: String?) -> String? {
        let server = host.map { "“\($0)”" } ?? "the server"
        switch code {
        case .cancelled: return "cancelled"
        case .badURL: return "bad URL"
        case .unsupportedURL: return "unsupported URL"
        case .timedOut: return "The request timed out."
        case .cannotFindHost: return "A server with the specified hostname could not be found."
        case .cannotConnectToHost: return "Could not connect to the server."
        case .networkConnectionLost: return "The network connection was lost."
        case .httpTooManyRedirects: return "too many HTTP redirects"
        case .secureConnectionFailed:
            return "An SSL error has occurred and a secure connection to the server cannot be made."
        case .serverCertificateUntrusted:
            return
                "The certificate for this server is invalid. You might be connecting to a server that is pretending to be \(server) which could put your confidential information at risk."
        case .clientCertificateRequired: return "The server \(server) requires a client certificate."
        case .clientCertificateRejected: return "The server \(server) did not accept the certificate."
        default: return nil
        }
    }
}

// Apple's values for the TLS error codes. swift-corelibs-foundation's constants for these are
// shifted by one (its `NSURLErrorServerCertificateUntrusted` is -1203, Apple's and its own
// `URLError.Code.serverCertificateUntrusted` are -1202); these shadow them for code that imports
// SesameNetworking, so comparisons with `(error as NSError).code` hold as on Apple's platforms.
/// A TLS connection could not be made (the handshake failed).
public let NSURLErrorSecureConnectionFailed = -1200
/// The server's certificate has expired.
public let NSURLErrorServerCertificateHasBadDate = -1201
/// The server's certificate is not trusted (a wrong host, a bad chain).
public let NSURLErrorServerCertificateUntrusted = -1202
/// The server's certificate chain does not end at a trusted root.
public let NSURLErrorServerCertificateHasUnknownRoot = -1203
/// The server's certificate is not valid yet.
public let NSURLErrorServerCertificateNotYetValid = -1204
/// The server rejected the client certificate.
public let NSURLErrorClientCertificateRejected = -1205
/// The server requires a client certificate and none was given.
public let NSURLErrorClientCertificateRequired = -1206
