internal import COpenSSL
internal import CSesameShims

// One Swift owner per OpenSSL object. These boxes are immutable after creation (OpenSSL's X509 and
// EVP_PKEY are reference counted and safe to read from several threads once built), which is why
// they may be `@unchecked Sendable`.

/// Owns one reference to an `X509`.
final class X509Box: @unchecked Sendable {
    let pointer: OpaquePointer

    /// Wraps a pointer whose reference the caller hands over.
    init(takingOwnership pointer: OpaquePointer) { self.pointer = pointer }

    /// Wraps a borrowed pointer, taking a reference of its own.
    init(borrowing pointer: OpaquePointer) {
        X509_up_ref(pointer)
        self.pointer = pointer
    }

    deinit { X509_free(pointer) }
}

/// Owns one reference to an `EVP_PKEY`.
final class PrivateKeyBox: @unchecked Sendable {
    let pointer: OpaquePointer

    init(takingOwnership pointer: OpaquePointer) { self.pointer = pointer }

    init(borrowing pointer: OpaquePointer) {
        EVP_PKEY_up_ref(pointer)
        self.pointer = pointer
    }

    deinit { EVP_PKEY_free(pointer) }
}

/// Owns a memory `BIO` over a copy of some bytes, for the lifetime of a parse.
struct MemoryBIO: ~Copyable {
    let pointer: OpaquePointer

    init?<Bytes: Collection>(_ bytes: Bytes) where Bytes.Element == UInt8 {
        let array = Array(bytes)
        let bio = array.withUnsafeBytes { raw -> OpaquePointer? in
            // BIO_new_mem_buf would borrow; a writable mem BIO copies, so `array` may go away.
            guard let bio = BIO_new(BIO_s_mem()) else { return nil }
            if !raw.isEmpty, BIO_write(bio, raw.baseAddress, Int32(raw.count)) != Int32(raw.count) {
                BIO_free(bio)
                return nil
            }
            return bio
        }
        guard let bio else { return nil }
        self.pointer = bio
    }

    /// An empty writable memory BIO, for output.
    init?() {
        guard let bio = BIO_new(BIO_s_mem()) else { return nil }
        self.pointer = bio
    }

    /// Everything written into the BIO so far.
    var contents: [UInt8] {
        var data: UnsafeMutablePointer<CChar>? = nil
        let length = CSesameShims_BIO_get_mem_data(pointer, &data)
        guard length > 0, let data else { return [] }
        return data.withMemoryRebound(to: UInt8.self, capacity: length) {
            Array(UnsafeBufferPointer(start: $0, count: length))
        }
    }

    deinit { BIO_free(pointer) }
}

/// Serializes with an `i2d_*` function into bytes.
func derBytes(_ encode: (UnsafeMutablePointer<UnsafeMutablePointer<UInt8>?>) -> Int32) -> [UInt8] {
    var out: UnsafeMutablePointer<UInt8>? = nil
    let length = encode(&out)
    guard length > 0, let out else { return [] }
    defer { CSesameShims_OPENSSL_free(out) }
    return Array(UnsafeBufferPointer(start: out, count: Int(length)))
}

/// SHA-256 of some bytes.
func sha256Digest(_ bytes: [UInt8]) -> [UInt8] {
    var digest = [UInt8](repeating: 0, count: 32)
    var length: UInt32 = 0
    bytes.withUnsafeBytes { raw in
        _ = EVP_Digest(raw.baseAddress, raw.count, &digest, &length, EVP_sha256(), nil)
    }
    return digest
}

/// The text of a NUL-terminated C buffer (the whole buffer when it has no NUL).
func stringFromCBuffer(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}
