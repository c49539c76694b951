internal import COpenSSL
import Foundation

/// A certificate revocation list supplied by the caller (Sesame never fetches one from the
/// network). Given to an evaluation, it makes a certificate it lists fail as revoked; with CRLs
/// given, every certificate of the chain must be covered by one.
public struct CertificateRevocationList: Sendable, Hashable {
    let box: CRLBox
    /// The DER bytes.
    public let derEncoded: Data

    /// Parses a DER or PEM CRL.
    /// - Throws: ``SesameError/Code/invalidCertificate`` when the bytes hold no CRL.
    public init(_ bytes: Data, source: String = "CRL") throws {
        let pointer: OpaquePointer? = bytes.withUnsafeBytes { raw -> OpaquePointer? in
            guard let base = raw.baseAddress else { return nil }
            if let bio = BIO_new_mem_buf(base, Int32(raw.count)) {
                defer { BIO_free(bio) }
                if let crl = PEM_read_bio_X509_CRL(bio, nil, nil, nil) { return crl }
            }
            var cursor: UnsafePointer<UInt8>? = base.assumingMemoryBound(to: UInt8.self)
            return d2i_X509_CRL(nil, &cursor, raw.count)
        }
        _ = OpenSSLErrorStack.drain()
        guard let pointer else { throw SesameError(.invalidCertificate, "\(source): not a CRL (DER or PEM)") }
        box = CRLBox(pointer)
        var der: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509_CRL(pointer, &der)
        if length > 0, let der {
            derEncoded = Data(bytes: der, count: Int(length))
            CRYPTO_free(der, #fileID, #line)
        } else {
            derEncoded = Data()
        }
    }

    /// Loads a CRL file (DER or PEM), naming it in errors.
    public static func load(contentsOf path: String) throws -> CertificateRevocationList {
        let bytes = try UserFile.read(path, as: .revocationLists)
        return try CertificateRevocationList(Data(bytes), source: "'\(path)'")
    }

    public static func == (lhs: Self, rhs: Self) -> Bool { lhs.derEncoded == rhs.derEncoded }
    public func hash(into hasher: inout Hasher) { hasher.combine(derEncoded) }
}

/// Owns one `X509_CRL`.
final class CRLBox: @unchecked Sendable {
    // @unchecked: immutable after creation; OpenSSL CRLs are safe to read from several threads.
    let pointer: OpaquePointer
    init(_ pointer: OpaquePointer) { self.pointer = pointer }
    deinit { X509_CRL_free(pointer) }
}
