internal import COpenSSL
internal import CSesameShims
import FoundationEssentials

/// Owns an `EVP_PKEY` built by the test PKI. Immutable after creation.
final class OwnedKey: @unchecked Sendable {
    let pointer: OpaquePointer
    init(takingOwnership pointer: OpaquePointer) { self.pointer = pointer }
    deinit { EVP_PKEY_free(pointer) }

    /// Unencrypted PKCS#8 PEM.
    var pem: String {
        let bio = BIO_new(BIO_s_mem())!  // safe: allocation failure of a test helper is not recoverable
        defer { BIO_free(bio) }
        PEM_write_bio_PrivateKey(bio, pointer, nil, nil, 0, nil, nil)
        return bioString(bio)
    }

    /// PKCS#8 PEM encrypted with AES-256-CBC under `password`.
    func encryptedPEM(password: String) -> String {
        let bio = BIO_new(BIO_s_mem())!  // safe: as above
        defer { BIO_free(bio) }
        password.withCString { pass in
            _ = PEM_write_bio_PKCS8PrivateKey(
                bio,
                pointer,
                EVP_aes_256_cbc(),
                pass,
                Int32(strlen(pass)),
                nil,
                nil
            )
        }
        return bioString(bio)
    }
}

/// Owns an `X509` built by the test PKI. Immutable after signing.
final class OwnedX509: @unchecked Sendable {
    let pointer: OpaquePointer
    init(takingOwnership pointer: OpaquePointer) { self.pointer = pointer }
    deinit { X509_free(pointer) }

    var der: Data {
        var out: UnsafeMutablePointer<UInt8>? = nil
        let length = i2d_X509(pointer, &out)
        guard length > 0, let out else { return Data() }
        defer { CSesameShims_OPENSSL_free(out) }
        return Data(bytes: out, count: Int(length))
    }
}

func bioString(_ bio: OpaquePointer) -> String {
    var data: UnsafeMutablePointer<CChar>? = nil
    let length = CSesameShims_BIO_get_mem_data(bio, &data)
    guard length > 0, let data else { return "" }
    return data.withMemoryRebound(to: UInt8.self, capacity: length) {
        String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
    }
}

/// An error of the testing helpers, with the OpenSSL reasons.
public struct TestingError: Error, CustomStringConvertible, Sendable {
    public let description: String
    init(_ what: String) {
        var reasons: [String] = []
        while case let code = ERR_get_error(), code != 0 {
            if let reason = ERR_reason_error_string(code) { reasons.append(String(cString: reason)) }
        }
        self.description = reasons.isEmpty ? what : "\(what) (\(reasons.joined(separator: "; ")))"
    }
}
