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
        case SSL_ERROR_SYSCALL where operation == "handshake":
            return endedDuringHandshake(
                SesameError(.connectionClosed, "\(peer): the connection ended during the TLS handshake")
            )
        case SSL_ERROR_SYSCALL:
            return SesameError(.connectionClosed, "\(peer): the connection ended during the TLS \(operation)")
        case SSL_ERROR_SSL where operation == "handshake":
            return SesameError(.tlsHandshakeFailed, "\(peer): \(stack)")
        default:
            return SesameError(.tlsProtocolError, "\(peer): TLS \(operation) failed: \(stack)")
        }
    }

    /// What the end of the connection in the middle of the handshake, with no alert to read,
    /// means. Once this client has answered a certificate request, the end is the server's
    /// verdict on that answer: a server that requires a certificate, or refuses the one it got,
    /// stops the handshake there. It sends an alert first, but when it closes with this client's
    /// last flight unread its kernel resets the connection, and the reset can overtake the alert
    /// (OpenSSL's `s_server -Verify` under TLS 1.2 does this). Otherwise `underlying` stands.
    func endedDuringHandshake(_ underlying: SesameError) -> SesameError {
        guard machine.identityAnswered, !machine.trustRejected else { return underlying }
        let peer = "\(serverName):\(port)"
        guard let sent = machine.sentIdentity else {
            return SesameError(
                .clientCertificateRequired,
                "\(peer): the server asked for a client certificate, none was sent, and it ended the handshake"
                    + " (\(underlying.detail))"
            )
        }
        return SesameError(
            .clientCertificateRejected,
            "\(peer): the server ended the handshake after receiving the client certificate"
                + " \"\(sent.certificate.subject)\" (\(underlying.detail))"
        )
    }

    func trustRejectedError() -> SesameError {
        let reasons = lastEvaluation.map { $0.failures.map(\.description).joined(separator: "; ") } ?? ""
        let detail = reasons.isEmpty ? "the trust decision rejected the server's certificate" : reasons
        return SesameError(.serverTrustRejected, "\(serverName):\(port): \(detail)")
    }
}
