import FoundationEssentials
import Glibc

/// What a verified OCSP response (RFC 6960) says about one certificate: the answer a server
/// staples to its handshake (RFC 6066 `status_request`), or one handed to
/// ``ServerTrust/ocspResponses`` (`SecTrustSetOCSPResponse`).
public struct OCSPStatus: Hashable, Sendable, CustomStringConvertible {
    /// The certificate's status.
    public enum CertificateStatus: Hashable, Sendable {
        /// Not revoked.
        case good
        /// Revoked at `date`, for `reason` (RFC 5280 CRLReason name) when the responder gave one.
        case revoked(date: Date, reason: String?)
        /// The responder does not know the certificate.
        case unknown
    }

    /// The certificate's status.
    public let status: CertificateStatus
    /// When the responder last knew the status to be correct.
    public let thisUpdate: Date
    /// When newer information will be available, if the responder said.
    public let nextUpdate: Date?
    /// The responder (the issuing CA or its delegated OCSP signer), as a distinguished name.
    public let responder: String

    public var description: String {
        let updates =
            "this update \(thisUpdate.formatted(.iso8601))"
            + (nextUpdate.map { ", next update \($0.formatted(.iso8601))" } ?? "")
        switch status {
        case .good:
            return "good (\(updates), signed by \(responder))"
        case .unknown:
            return "unknown to the responder (\(updates), signed by \(responder))"
        case .revoked(let date, let reason):
            return "revoked at \(date.formatted(.iso8601))\(reason.map { " (\($0))" } ?? "") (\(updates))"
        }
    }
}
