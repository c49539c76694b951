internal import COpenSSL
internal import CSesameShims
import FoundationEssentials

extension TestPKI {
    /// What a test OCSP response says about a certificate.
    public enum OCSPAnswer: Sendable {
        /// The certificate is good.
        case good
        /// Revoked at the given time with CRLReason keyCompromise.
        case revoked(at: Date)
        /// The responder does not know the certificate.
        case unknown
        /// A response with status `tryLater` and no answer at all.
        case tryLater
    }

    /// A delegated OCSP responder certificate (EKU OCSPSigning) issued by ``intermediate``, the
    /// CA of the server leaves.
    public func ocspResponder() throws -> TestIssuedCertificate {
        try Self.issue(
            subject: "CN=Sesame Test OCSP Responder,O=Sesame Test",
            key: .ecdsaP256,
            issuer: intermediate,
            profile: .ocspResponder,
            notBefore: now - 86_400,
            notAfter: now + 365 * 86_400
        )
    }

    /// A DER OCSP response (RFC 6960) about `certificate`, as a server would staple it.
    /// - Parameters:
    ///   - certificate: the certificate the response is about.
    ///   - answer: its status.
    ///   - signer: who signs: `nil` is the certificate's issuer; pass ``ocspResponder()`` for a
    ///     delegated responder, or any other certificate to make a response that must not verify.
    ///   - thisUpdate: default an hour before ``now``.
    ///   - validity: seconds from `thisUpdate` to `nextUpdate`; `nil` leaves `nextUpdate` out.
    public func ocspResponse(
        for certificate: TestIssuedCertificate,
        answer: OCSPAnswer = .good,
        signer: TestIssuedCertificate? = nil,
        thisUpdate: Date? = nil,
        validity: TimeInterval? = 4 * 86_400
    ) throws -> Data {
        guard let issuer = certificate.issuer else {
            throw TestingError("a self-signed certificate has no OCSP issuer")
        }
        let signer = signer ?? issuer
        if case .tryLater = answer {
            guard let response = OCSP_response_create(OCSP_RESPONSE_STATUS_TRYLATER, nil) else {
                throw TestingError("OCSP_response_create")
            }
            defer { OCSP_RESPONSE_free(response) }
            return try Self.der(response)
        }
        guard let basic = OCSP_BASICRESP_new() else { throw TestingError("OCSP_BASICRESP_new") }
        defer { OCSP_BASICRESP_free(basic) }
        guard let id = OCSP_cert_to_id(EVP_sha1(), certificate.x509.pointer, issuer.x509.pointer) else {
            throw TestingError("OCSP_cert_to_id")
        }
        defer { OCSP_CERTID_free(id) }
        let start = thisUpdate ?? now - 3600
        let thisTime = ASN1_TIME_set(nil, time_t(start.timeIntervalSince1970))
        let nextTime = validity.map { ASN1_TIME_set(nil, time_t((start + $0).timeIntervalSince1970)) } ?? nil
        var revokedTime: UnsafeMutablePointer<ASN1_TIME>? = nil
        defer {
            ASN1_TIME_free(thisTime)
            ASN1_TIME_free(nextTime)
            ASN1_TIME_free(revokedTime)
        }
        let status: Int32
        var reason: Int32 = 0
        switch answer {
        case .good, .tryLater:
            status = V_OCSP_CERTSTATUS_GOOD
        case .unknown:
            status = V_OCSP_CERTSTATUS_UNKNOWN
        case .revoked(let date):
            status = V_OCSP_CERTSTATUS_REVOKED
            reason = OCSP_REVOKED_STATUS_KEYCOMPROMISE
            revokedTime = ASN1_TIME_set(nil, time_t(date.timeIntervalSince1970))
        }
        guard OCSP_basic_add1_status(basic, id, status, reason, revokedTime, thisTime, nextTime) != nil,
            OCSP_basic_sign(basic, signer.x509.pointer, signer.key.pointer, EVP_sha256(), nil, 0) == 1,
            let response = OCSP_response_create(OCSP_RESPONSE_STATUS_SUCCESSFUL, basic)
        else { throw TestingError("signing the OCSP response") }
        defer { OCSP_RESPONSE_free(response) }
        return try Self.der(response)
    }

    private static func der(_ response: OpaquePointer) throws -> Data {
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_OCSP_RESPONSE(response, &out)
        guard length > 0, let out else { throw TestingError("i2d_OCSP_RESPONSE") }
        defer { CSesameShims_OPENSSL_free(out) }
        return Data(bytes: out, count: Int(length))
    }
}
