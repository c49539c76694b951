internal import COpenSSL

extension TLSEngine {
    /// Turns an OpenSSL failure into a specific ``SesameError``: trust, client certificate, or the
    /// TLS reasons themselves.
    func error(for code: Int32, _ stack: OpenSSLErrorStack, during operation: String) -> SesameError {
        let peer = "\(serverName):\(port)"
        if machine.trustRejected { return trustRejectedError() }
        if stack.contains(library: ERR_LIB_SSL, reason: SSL_R_TLSV13_ALERT_CERTIFICATE_REQUIRED) {
            return SesameError(.clientCertificateRequired, "\(peer): the server requires a client certificate")
        }
        if machine.clientCertificateRequested {
            let sent = machine.sentIdentity != nil
            let rejectingAlerts: [Int32] = [
                SSL_R_SSLV3_ALERT_HANDSHAKE_FAILURE, SSL_R_SSLV3_ALERT_BAD_CERTIFICATE,
                SSL_R_SSLV3_ALERT_UNSUPPORTED_CERTIFICATE, SSL_R_SSLV3_ALERT_CERTIFICATE_REVOKED,
                SSL_R_SSLV3_ALERT_CERTIFICATE_EXPIRED, SSL_R_SSLV3_ALERT_CERTIFICATE_UNKNOWN,
                SSL_R_TLSV1_ALERT_UNKNOWN_CA, SSL_R_TLSV1_ALERT_ACCESS_DENIED, SSL_R_TLSV1_ALERT_DECRYPT_ERROR,
            ]
            if rejectingAlerts.contains(where: { stack.contains(library: ERR_LIB_SSL, reason: $0) }) {
                return sent
                    ? SesameError(
                        .clientCertificateRejected,
                        "\(peer): the server rejected the client certificate (\(stack))"
                    )
                    : SesameError(
                        .clientCertificateRequired,
                        "\(peer): the server requires a client certificate (\(stack))"
                    )
            }
        }
        switch code {
        case SSL_ERROR_SYSCALL:
            return SesameError(.connectionClosed, "\(peer): the connection ended during the TLS \(operation)")
        case SSL_ERROR_SSL where operation == "handshake":
            return SesameError(.tlsHandshakeFailed, "\(peer): \(stack)")
        default:
            return SesameError(.tlsProtocolError, "\(peer): TLS \(operation) failed: \(stack)")
        }
    }

    func trustRejectedError() -> SesameError {
        let reasons = lastEvaluation.map { $0.failures.map(\.description).joined(separator: "; ") } ?? ""
        let detail = reasons.isEmpty ? "the trust decision rejected the server's certificate" : reasons
        return SesameError(.serverTrustRejected, "\(serverName):\(port): \(detail)")
    }
}
