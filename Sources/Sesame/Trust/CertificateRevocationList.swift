internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Glibc

/// A certificate revocation list supplied by the caller (Sesame never fetches one from the
/// network). Given to an evaluation, it makes a certificate it lists fail as revoked; with CRLs
/// given, every certificate of the chain must be covered by one.
public struct CertificateRevocationList: Sendable, Hashable {
    let box: CRLBox
    /// The DER bytes.
    public let derEncoded: Data

    /// Parses one DER or PEM CRL.
    /// - Throws: ``SesameError/Code/invalidCertificate`` when the bytes hold no CRL, or more than
    ///   one (``parseAll(_:source:)`` reads every CRL of a PEM file).
    public init(_ bytes: Data, source: String = "CRL") throws {
        let all = try Self.parseAll(bytes, source: source)
        guard all.count == 1, let only = all.first else {
            throw SesameError(
                .invalidCertificate,
                "\(source): holds \(all.count) CRLs where one was expected (CertificateRevocationList.parseAll reads them all)"
            )
        }
        self = only
    }

    private init(taking pointer: OpaquePointer) {
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

    /// Every CRL in `bytes`: each PEM block of a PEM file (as `openssl verify -CRLfile` and
    /// curl's `--crlfile` read them; text between blocks is ignored), or the one CRL of a DER file.
    /// - Throws: ``SesameError/Code/invalidCertificate`` naming `source` and the position when
    ///   there is no CRL, a PEM block is not an `X509 CRL` or does not parse, or DER bytes
    ///   follow the CRL.
    public static func parseAll(_ bytes: Data, source: String = "CRL") throws -> [CertificateRevocationList] {
        defer { _ = OpenSSLErrorStack.drain() }
        let isPEM = bytes.firstRange(of: Array("-----BEGIN ".utf8)) != nil
        let crls = try bytes.withUnsafeBytes { raw -> [CertificateRevocationList] in
            guard let base = raw.baseAddress, raw.count > 0 else { return [] }
            guard isPEM else {
                var cursor: UnsafePointer<UInt8>? = base.assumingMemoryBound(to: UInt8.self)
                guard let crl = d2i_X509_CRL(nil, &cursor, raw.count) else {
                    throw SesameError(.invalidCertificate, "\(source): not a CRL (DER or PEM)")
                }
                let consumed = cursor.map { UnsafeRawPointer($0) - base } ?? raw.count
                guard consumed == raw.count else {
                    X509_CRL_free(crl)
                    throw SesameError(
                        .invalidCertificate,
                        "\(source): \(raw.count - consumed) bytes follow the DER CRL (a DER file holds one CRL; use PEM for several)"
                    )
                }
                return [CertificateRevocationList(taking: crl)]
            }
            guard let bio = BIO_new_mem_buf(base, Int32(clamping: raw.count)) else {
                throw SesameError(.invalidCertificate, "\(source): out of memory")
            }
            defer { BIO_free(bio) }
            var result: [CertificateRevocationList] = []
            var block = 0
            while true {
                var name: UnsafeMutablePointer<CChar>? = nil
                var header: UnsafeMutablePointer<CChar>? = nil
                var data: UnsafeMutablePointer<UInt8>? = nil
                var length = 0
                OpenSSLErrorStack.clear()
                guard PEM_read_bio(bio, &name, &header, &data, &length) == 1 else {
                    // The end of the input, or a block that does not decode.
                    let error = ERR_peek_last_error()
                    if ERR_GET_REASON(error) == PEM_R_NO_START_LINE { break }
                    throw SesameError(
                        .invalidCertificate,
                        "\(source): PEM block \(block + 1) is not valid base64 between matching BEGIN and END lines"
                    )
                }
                block += 1
                defer {
                    CSesameShims_OPENSSL_free(name)
                    CSesameShims_OPENSSL_free(header)
                    CSesameShims_OPENSSL_free(data)
                }
                let label = name.map { String(cString: $0) } ?? ""
                guard label == "X509 CRL" else {
                    throw SesameError(
                        .invalidCertificate,
                        "\(source): PEM block \(block) is a \(label), not an X509 CRL"
                    )
                }
                var cursor = UnsafePointer(data)
                guard let crl = d2i_X509_CRL(nil, &cursor, length) else {
                    throw SesameError(.invalidCertificate, "\(source): PEM block \(block) does not parse as a CRL")
                }
                result.append(CertificateRevocationList(taking: crl))
            }
            return result
        }
        guard !crls.isEmpty else { throw SesameError(.invalidCertificate, "\(source): holds no CRL (DER or PEM)") }
        return crls
    }

    /// Loads every CRL of a file (one DER CRL, or any number of PEM blocks), naming the file in
    /// errors.
    public static func load(contentsOf path: String) throws -> [CertificateRevocationList] {
        let bytes = try UserFile.read(path, as: .revocationLists)
        return try parseAll(Data(bytes), source: "'\(path)'")
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
