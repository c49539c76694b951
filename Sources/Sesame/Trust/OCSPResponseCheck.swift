internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Glibc

/// Verifies a DER OCSP response for a leaf certificate and reads its status.
///
/// The response must be signed by the leaf's issuer, or by a responder certificate the issuer
/// delegated with the OCSP-signing EKU that chains to the trust roots (RFC 6960 §4.2.2.2); it must
/// cover the leaf (any CertID hash algorithm), and be current at the validation time: `thisUpdate`
/// no later than five minutes ahead, `nextUpdate` (when present) no more than five minutes past,
/// and without `nextUpdate` no older than seven days. Anything else is a failure, never a pass.
enum OCSPResponseCheck {
    static let clockSkew: TimeInterval = 300
    static let maximumAgeWithoutNextUpdate: TimeInterval = 7 * 86_400

    /// Checks `responses` for `chain[0]`: a revocation in any of them is a failure; otherwise one
    /// verified "good" suffices (other responses may be about other certificates); otherwise every
    /// problem found is reported.
    static func evaluate(
        responses: [Data],
        chain: [Certificate],
        store: X509StoreBox,
        at date: Date?
    ) -> (status: OCSPStatus?, failures: [TrustFailureReason]) {
        guard let leaf = chain.first, !responses.isEmpty else { return (nil, []) }
        let subject = leaf.subject.description
        var good: OCSPStatus? = nil
        var problems: [TrustFailureReason] = []
        for response in responses {
            do throws(Problem) {
                guard let issuer = issuer(of: leaf, among: chain.dropFirst(), store: store) else {
                    throw Problem("the issuer of the certificate is unknown, so the OCSP response cannot be checked")
                }
                let status = try self.status(of: leaf, issuer: issuer, response: response, store: store, at: date)
                switch status.status {
                case .good:
                    good = good ?? status
                case .revoked:
                    let reason = TrustFailureReason(
                        kind: .revoked,
                        depth: 0,
                        subject: subject,
                        openSSLCode: 0,
                        message: "the OCSP response says \(status)"
                    )
                    return (status, [reason])
                case .unknown:
                    throw Problem("the OCSP responder does not know the certificate (\(status))")
                }
            } catch {
                problems.append(
                    TrustFailureReason(
                        kind: .invalidRevocationStatus,
                        depth: 0,
                        subject: subject,
                        openSSLCode: 0,
                        message: error.message
                    )
                )
            }
        }
        if let good { return (good, []) }
        return (nil, problems)
    }

    struct Problem: Error {
        let message: String
        init(_ message: String) { self.message = message }
    }

    /// The verified status of `leaf` in `response`.
    static func status(
        of leaf: Certificate,
        issuer: Certificate,
        response der: Data,
        store: X509StoreBox,
        at date: Date?
    ) throws(Problem) -> OCSPStatus {
        let bytes = [UInt8](der)
        let parsed: OpaquePointer? = bytes.withUnsafeBufferPointer { buffer in
            var cursor: UnsafePointer<UInt8>? = buffer.baseAddress
            return d2i_OCSP_RESPONSE(nil, &cursor, buffer.count)
        }
        guard let parsed else {
            _ = OpenSSLErrorStack.drain()
            throw Problem("the OCSP response is not valid DER (\(bytes.count) bytes)")
        }
        defer { OCSP_RESPONSE_free(parsed) }
        let responseStatus = OCSP_response_status(parsed)
        guard responseStatus == OCSP_RESPONSE_STATUS_SUCCESSFUL else {
            let name = OCSP_response_status_str(Int(responseStatus)).map { String(cString: $0) } ?? "\(responseStatus)"
            throw Problem("the OCSP responder answered '\(name)' instead of a status")
        }
        guard let basic = OCSP_response_get1_basic(parsed) else {
            throw Problem("the OCSP response is not a basic response")
        }
        defer { OCSP_BASICRESP_free(basic) }
        guard let issuerStack = CSesameShims_sk_X509_new_null() else { throw Problem("out of memory") }
        defer { CSesameShims_sk_X509_free(issuerStack) }
        CSesameShims_sk_X509_push(issuerStack, issuer.box.pointer)
        // The issuer, passed in `certs` with OCSP_TRUSTOTHER, is trusted as a signer without a
        // second chain build (it was validated with the leaf). A delegated responder found in the
        // response is chain-verified against the roots and must carry id-kp-OCSPSigning from the issuer.
        OpenSSLErrorStack.clear()
        guard OCSP_basic_verify(basic, issuerStack, store.pointer, UInt(OCSP_TRUSTOTHER)) == 1 else {
            throw Problem("the OCSP response's signature does not verify (\(OpenSSLErrorStack.drain()))")
        }
        let responder = signerName(basic, issuerStack)
        guard let single = findSingleResponse(basic, leaf: leaf, issuer: issuer) else {
            throw Problem("the OCSP response (signed by \(responder)) does not cover the certificate")
        }
        var reason: Int32 = -1
        var revocationTime: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>? = nil
        var thisUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>? = nil
        var nextUpdate: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>? = nil
        let code = OCSP_single_get0_status(single, &reason, &revocationTime, &thisUpdate, &nextUpdate)
        guard let thisDate = Self.date(thisUpdate) else { throw Problem("the OCSP response has no thisUpdate") }
        let nextDate = Self.date(nextUpdate)
        let now = date ?? Date()
        if thisDate > now + clockSkew {
            throw Problem("the OCSP response is not valid yet (thisUpdate \(thisDate.formatted(.iso8601)))")
        }
        if let nextDate, nextDate < now - clockSkew {
            throw Problem("the OCSP response is stale (nextUpdate \(nextDate.formatted(.iso8601)) has passed)")
        }
        if nextDate == nil, thisDate < now - maximumAgeWithoutNextUpdate {
            throw Problem("the OCSP response is stale (thisUpdate \(thisDate.formatted(.iso8601)), no nextUpdate)")
        }
        let status: OCSPStatus.CertificateStatus
        switch code {
        case V_OCSP_CERTSTATUS_GOOD:
            status = .good
        case V_OCSP_CERTSTATUS_REVOKED:
            let name = reason >= 0 ? OCSP_crl_reason_str(Int(reason)).map { String(cString: $0) } : nil
            status = .revoked(date: Self.date(revocationTime) ?? thisDate, reason: name)
        default:
            status = .unknown
        }
        return OCSPStatus(status: status, thisUpdate: thisDate, nextUpdate: nextDate, responder: responder)
    }

    /// The single response about `leaf`, whatever hash algorithm its CertID uses.
    private static func findSingleResponse(
        _ basic: OpaquePointer,
        leaf: Certificate,
        issuer: Certificate
    )
        -> OpaquePointer?
    {
        for index in 0..<OCSP_resp_count(basic) {
            guard let single = OCSP_resp_get0(basic, index), let id = OCSP_SINGLERESP_get0_id(single) else {
                continue
            }
            var algorithm: OpaquePointer? = nil
            guard OCSP_id_get0_info(nil, &algorithm, nil, nil, id) == 1,
                let algorithm,
                let digest = EVP_get_digestbyname(OBJ_nid2sn(OBJ_obj2nid(algorithm))),
                let expected = OCSP_cert_to_id(digest, leaf.box.pointer, issuer.box.pointer)
            else { continue }
            defer { OCSP_CERTID_free(expected) }
            if OCSP_id_cmp(expected, id) == 0 { return single }
        }
        return nil
    }

    private static func signerName(_ basic: OpaquePointer, _ extra: OpaquePointer) -> String {
        var signer: OpaquePointer? = nil
        guard OCSP_resp_get0_signer(basic, &signer, extra) == 1, let signer else { return "an unknown responder" }
        return DistinguishedName(borrowing: X509_get_subject_name(signer)).description
    }

    /// The certificate among `candidates` (or in the store) that issued `leaf`.
    static func issuer(
        of leaf: Certificate,
        among candidates: ArraySlice<Certificate>,
        store: X509StoreBox
    )
        -> Certificate?
    {
        if let found = candidates.first(where: { X509_check_issued($0.box.pointer, leaf.box.pointer) == X509_V_OK }) {
            return found
        }
        guard let context = X509_STORE_CTX_new() else { return nil }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store.pointer, leaf.box.pointer, nil) == 1 else { return nil }
        var issuer: OpaquePointer? = nil
        guard X509_STORE_CTX_get1_issuer(&issuer, context, leaf.box.pointer) == 1, let issuer else {
            _ = OpenSSLErrorStack.drain()
            return nil
        }
        return Certificate(box: X509Box(takingOwnership: issuer))
    }

    private static func date(_ time: UnsafeMutablePointer<ASN1_GENERALIZEDTIME>?) -> Date? {
        guard let time else { return nil }
        var parts = tm()
        guard ASN1_TIME_to_tm(time, &parts) == 1 else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(timegm(&parts)))
    }
}
