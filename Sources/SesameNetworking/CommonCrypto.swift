internal import COpenSSL
import Foundation

// CommonCrypto, as apps call it (on Apple's platforms `import CommonCrypto`; here it comes with
// `import SesameNetworking`): digests, HMAC, PBKDF2 and AES, on OpenSSL. Names, types, constants
// and status codes are Apple's; constants that Apple imports from C enums are `Int`, so
// `CCHmacAlgorithm(kCCHmacAlgSHA256)` reads as it does there.

/// A length in CommonCrypto's digest functions.
public typealias CC_LONG = UInt32

/// The length of an MD5 digest, in bytes.
public let CC_MD5_DIGEST_LENGTH: Int32 = 16
/// The length of a SHA-1 digest, in bytes.
public let CC_SHA1_DIGEST_LENGTH: Int32 = 20
/// The length of a SHA-224 digest, in bytes.
public let CC_SHA224_DIGEST_LENGTH: Int32 = 28
/// The length of a SHA-256 digest, in bytes.
public let CC_SHA256_DIGEST_LENGTH: Int32 = 32
/// The length of a SHA-384 digest, in bytes.
public let CC_SHA384_DIGEST_LENGTH: Int32 = 48
/// The length of a SHA-512 digest, in bytes.
public let CC_SHA512_DIGEST_LENGTH: Int32 = 64
/// The block size of MD5, in bytes.
public let CC_MD5_BLOCK_BYTES: Int32 = 64
/// The block size of SHA-1, in bytes.
public let CC_SHA1_BLOCK_BYTES: Int32 = 64
/// The block size of SHA-256, in bytes.
public let CC_SHA256_BLOCK_BYTES: Int32 = 64
/// The block size of SHA-512, in bytes.
public let CC_SHA512_BLOCK_BYTES: Int32 = 128

/// One digest computation in progress: a C struct on Apple's platforms, here a handle on an
/// OpenSSL digest context (copies share it).
public struct CCDigestContext: @unchecked Sendable {
    // @unchecked: used by one caller at a time, as Apple's C contexts are.
    fileprivate var box: DigestBox?
    /// A context to pass to an `_Init` function.
    public init() {}
}

/// An MD5 computation in progress. Unlike Apple's C struct, a copy shares the computation instead
/// of forking it.
public typealias CC_MD5_CTX = CCDigestContext
/// A SHA-1 computation in progress. Unlike Apple's C struct, a copy shares the computation instead
/// of forking it.
public typealias CC_SHA1_CTX = CCDigestContext
/// A SHA-224 or SHA-256 computation in progress. Unlike Apple's C struct, a copy shares the
/// computation instead of forking it.
public typealias CC_SHA256_CTX = CCDigestContext
/// A SHA-384 or SHA-512 computation in progress. Unlike Apple's C struct, a copy shares the
/// computation instead of forking it.
public typealias CC_SHA512_CTX = CCDigestContext

private final class DigestBox {
    let context: OpaquePointer
    init?(_ digest: OpaquePointer?) {
        guard let digest, let context = EVP_MD_CTX_new() else { return nil }
        guard EVP_DigestInit_ex(context, digest, nil) == 1 else {
            EVP_MD_CTX_free(context)
            return nil
        }
        self.context = context
    }
    deinit { EVP_MD_CTX_free(context) }
}

private func oneShot(
    _ digest: OpaquePointer?,
    _ data: UnsafeRawPointer?,
    _ length: CC_LONG,
    _ out: UnsafeMutablePointer<UInt8>?
)
    -> UnsafeMutablePointer<UInt8>?
{
    guard let out, let digest else { return nil }
    var size: UInt32 = 0
    let bytes = data ?? UnsafeRawPointer(out)
    guard EVP_Digest(bytes, Int(data == nil ? 0 : length), out, &size, digest, nil) == 1 else { return nil }
    return out
}

private func initialize(_ context: UnsafeMutablePointer<CCDigestContext>?, _ digest: OpaquePointer?) -> Int32 {
    guard let context, let box = DigestBox(digest) else { return 0 }
    context.pointee.box = box
    return 1
}

private func update(
    _ context: UnsafeMutablePointer<CCDigestContext>?,
    _ data: UnsafeRawPointer?,
    _ length: CC_LONG
) -> Int32 {
    guard let box = context?.pointee.box else { return 0 }
    guard length > 0, let data else { return 1 }
    return EVP_DigestUpdate(box.context, data, Int(length)) == 1 ? 1 : 0
}

private func finish(_ out: UnsafeMutablePointer<UInt8>?, _ context: UnsafeMutablePointer<CCDigestContext>?) -> Int32 {
    guard let out, let box = context?.pointee.box else { return 0 }
    var size: UInt32 = 0
    let done = EVP_DigestFinal_ex(box.context, out, &size) == 1
    context?.pointee.box = nil
    return done ? 1 : 0
}

/// Writes the MD5 digest of `len` bytes of `data` to `md` and returns `md`.
@discardableResult
public func CC_MD5(
    _ data: UnsafeRawPointer!,
    _ len: CC_LONG,
    _ md: UnsafeMutablePointer<UInt8>!
) -> UnsafeMutablePointer<UInt8>! { oneShot(EVP_md5(), data, len, md) }
/// Writes the SHA-1 digest of `len` bytes of `data` to `md` and returns `md`.
@discardableResult
public func CC_SHA1(
    _ data: UnsafeRawPointer!,
    _ len: CC_LONG,
    _ md: UnsafeMutablePointer<UInt8>!
) -> UnsafeMutablePointer<UInt8>! { oneShot(EVP_sha1(), data, len, md) }
/// Writes the SHA-224 digest of `len` bytes of `data` to `md` and returns `md`.
@discardableResult
public func CC_SHA224(
    _ data: UnsafeRawPointer!,
    _ len: CC_LONG,
    _ md: UnsafeMutablePointer<UInt8>!
) -> UnsafeMutablePointer<UInt8>! { oneShot(EVP_sha224(), data, len, md) }
/// Writes the SHA-256 digest of `len` bytes of `data` to `md` and returns `md`.
@discardableResult
public func CC_SHA256(
    _ data: UnsafeRawPointer!,
    _ len: CC_LONG,
    _ md: UnsafeMutablePointer<UInt8>!
) -> UnsafeMutablePointer<UInt8>! { oneShot(EVP_sha256(), data, len, md) }
/// Writes the SHA-384 digest of `len` bytes of `data` to `md` and returns `md`.
@discardableResult
public func CC_SHA384(
    _ data: UnsafeRawPointer!,
    _ len: CC_LONG,
    _ md: UnsafeMutablePointer<UInt8>!
) -> UnsafeMutablePointer<UInt8>! { oneShot(EVP_sha384(), data, len, md) }
/// Writes the SHA-512 digest of `len` bytes of `data` to `md` and returns `md`.
@discardableResult
public func CC_SHA512(
    _ data: UnsafeRawPointer!,
    _ len: CC_LONG,
    _ md: UnsafeMutablePointer<UInt8>!
) -> UnsafeMutablePointer<UInt8>! { oneShot(EVP_sha512(), data, len, md) }

/// Starts an MD5 computation in `c`; returns 1.
@discardableResult public func CC_MD5_Init(_ c: UnsafeMutablePointer<CC_MD5_CTX>!) -> Int32 { initialize(c, EVP_md5()) }
/// Adds `len` bytes of `data` to the MD5 computation in `c`; returns 1.
@discardableResult public func CC_MD5_Update(
    _ c: UnsafeMutablePointer<CC_MD5_CTX>!,
    _ data: UnsafeRawPointer!,
    _ len: CC_LONG
) -> Int32 { update(c, data, len) }
/// Writes the MD5 digest to `md` and ends the computation in `c`; returns 1.
@discardableResult public func CC_MD5_Final(
    _ md: UnsafeMutablePointer<UInt8>!,
    _ c: UnsafeMutablePointer<CC_MD5_CTX>!
) -> Int32 { finish(md, c) }
/// Starts a SHA-1 computation in `c`; returns 1.
@discardableResult public func CC_SHA1_Init(_ c: UnsafeMutablePointer<CC_SHA1_CTX>!) -> Int32 {
    initialize(c, EVP_sha1())
}
/// Adds `len` bytes of `data` to the SHA-1 computation in `c`; returns 1.
@discardableResult public func CC_SHA1_Update(
    _ c: UnsafeMutablePointer<CC_SHA1_CTX>!,
    _ data: UnsafeRawPointer!,
    _ len: CC_LONG
) -> Int32 { update(c, data, len) }
/// Writes the SHA-1 digest to `md` and ends the computation in `c`; returns 1.
@discardableResult public func CC_SHA1_Final(
    _ md: UnsafeMutablePointer<UInt8>!,
    _ c: UnsafeMutablePointer<CC_SHA1_CTX>!
) -> Int32 { finish(md, c) }
/// Starts a SHA-224 computation in `c`; returns 1.
@discardableResult public func CC_SHA224_Init(_ c: UnsafeMutablePointer<CC_SHA256_CTX>!) -> Int32 {
    initialize(c, EVP_sha224())
}
/// Adds `len` bytes of `data` to the SHA-224 computation in `c`; returns 1.
@discardableResult public func CC_SHA224_Update(
    _ c: UnsafeMutablePointer<CC_SHA256_CTX>!,
    _ data: UnsafeRawPointer!,
    _ len: CC_LONG
) -> Int32 { update(c, data, len) }
/// Writes the SHA-224 digest to `md` and ends the computation in `c`; returns 1.
@discardableResult public func CC_SHA224_Final(
    _ md: UnsafeMutablePointer<UInt8>!,
    _ c: UnsafeMutablePointer<CC_SHA256_CTX>!
) -> Int32 { finish(md, c) }
/// Starts a SHA-256 computation in `c`; returns 1.
@discardableResult public func CC_SHA256_Init(_ c: UnsafeMutablePointer<CC_SHA256_CTX>!) -> Int32 {
    initialize(c, EVP_sha256())
}
/// Adds `len` bytes of `data` to the SHA-256 computation in `c`; returns 1.
@discardableResult public func CC_SHA256_Update(
    _ c: UnsafeMutablePointer<CC_SHA256_CTX>!,
    _ data: UnsafeRawPointer!,
    _ len: CC_LONG
) -> Int32 { update(c, data, len) }
/// Writes the SHA-256 digest to `md` and ends the computation in `c`; returns 1.
@discardableResult public func CC_SHA256_Final(
    _ md: UnsafeMutablePointer<UInt8>!,
    _ c: UnsafeMutablePointer<CC_SHA256_CTX>!
) -> Int32 { finish(md, c) }
/// Starts a SHA-384 computation in `c`; returns 1.
@discardableResult public func CC_SHA384_Init(_ c: UnsafeMutablePointer<CC_SHA512_CTX>!) -> Int32 {
    initialize(c, EVP_sha384())
}
/// Adds `len` bytes of `data` to the SHA-384 computation in `c`; returns 1.
@discardableResult public func CC_SHA384_Update(
    _ c: UnsafeMutablePointer<CC_SHA512_CTX>!,
    _ data: UnsafeRawPointer!,
    _ len: CC_LONG
) -> Int32 { update(c, data, len) }
/// Writes the SHA-384 digest to `md` and ends the computation in `c`; returns 1.
@discardableResult public func CC_SHA384_Final(
    _ md: UnsafeMutablePointer<UInt8>!,
    _ c: UnsafeMutablePointer<CC_SHA512_CTX>!
) -> Int32 { finish(md, c) }
/// Starts a SHA-512 computation in `c`; returns 1.
@discardableResult public func CC_SHA512_Init(_ c: UnsafeMutablePointer<CC_SHA512_CTX>!) -> Int32 {
    initialize(c, EVP_sha512())
}
/// Adds `len` bytes of `data` to the SHA-512 computation in `c`; returns 1.
@discardableResult public func CC_SHA512_Update(
    _ c: UnsafeMutablePointer<CC_SHA512_CTX>!,
    _ data: UnsafeRawPointer!,
    _ len: CC_LONG
) -> Int32 { update(c, data, len) }
/// Writes the SHA-512 digest to `md` and ends the computation in `c`; returns 1.
@discardableResult public func CC_SHA512_Final(
    _ md: UnsafeMutablePointer<UInt8>!,
    _ c: UnsafeMutablePointer<CC_SHA512_CTX>!
) -> Int32 { finish(md, c) }

// MARK: - HMAC

/// The hash function of an HMAC (`kCCHmacAlgSHA256`, ...).
public typealias CCHmacAlgorithm = UInt32
/// HMAC with SHA-1.
public let kCCHmacAlgSHA1 = 0
/// HMAC with MD5.
public let kCCHmacAlgMD5 = 1
/// HMAC with SHA-256.
public let kCCHmacAlgSHA256 = 2
/// HMAC with SHA-384.
public let kCCHmacAlgSHA384 = 3
/// HMAC with SHA-512.
public let kCCHmacAlgSHA512 = 4
/// HMAC with SHA-224.
public let kCCHmacAlgSHA224 = 5

private func hmacDigest(_ algorithm: CCHmacAlgorithm) -> OpaquePointer? {
    switch Int(algorithm) {
    case kCCHmacAlgSHA1: return EVP_sha1()
    case kCCHmacAlgMD5: return EVP_md5()
    case kCCHmacAlgSHA256: return EVP_sha256()
    case kCCHmacAlgSHA384: return EVP_sha384()
    case kCCHmacAlgSHA512: return EVP_sha512()
    case kCCHmacAlgSHA224: return EVP_sha224()
    default: return nil
    }
}

/// An HMAC in progress (`CCHmacContext`): a handle on an OpenSSL MAC context (copies share it).
public struct CCHmacContext: @unchecked Sendable {
    // @unchecked: used by one caller at a time, as Apple's C context is.
    fileprivate var box: HMACBox?
    /// A context to pass to `CCHmacInit`.
    public init() {}
}

private final class HMACBox {
    let context: OpaquePointer
    let key: OpaquePointer
    init?(digest: OpaquePointer?, key bytes: UnsafeRawPointer?, length: Int) {
        let empty: [UInt8] = [0]
        let made = empty.withUnsafeBytes { nothing -> OpaquePointer? in
            let material = (bytes ?? nothing.baseAddress!).assumingMemoryBound(to: UInt8.self)
            return EVP_PKEY_new_raw_private_key(EVP_PKEY_HMAC, nil, material, bytes == nil ? 0 : length)
        }
        guard let digest, let made, let context = EVP_MD_CTX_new() else { return nil }
        key = made
        self.context = context
        guard EVP_DigestSignInit(context, nil, digest, nil, made) == 1 else { return nil }
    }
    deinit {
        EVP_MD_CTX_free(context)
        EVP_PKEY_free(key)
    }
}

/// Starts an HMAC of `algorithm` with `keyLength` bytes of `key` in `ctx`. An unknown algorithm
/// leaves the context unusable: the later calls do nothing.
public func CCHmacInit(
    _ ctx: UnsafeMutablePointer<CCHmacContext>!,
    _ algorithm: CCHmacAlgorithm,
    _ key: UnsafeRawPointer!,
    _ keyLength: Int
) {
    ctx?.pointee.box = HMACBox(digest: hmacDigest(algorithm), key: key, length: keyLength)
}

/// Adds `dataLength` bytes of `data` to the HMAC in `ctx`.
public func CCHmacUpdate(_ ctx: UnsafeMutablePointer<CCHmacContext>!, _ data: UnsafeRawPointer!, _ dataLength: Int) {
    guard let box = ctx?.pointee.box, let data, dataLength > 0 else { return }
    _ = EVP_DigestSignUpdate(box.context, data, dataLength)
}

/// Writes the HMAC (as many bytes as the hash's digest) to `macOut` and ends the computation.
public func CCHmacFinal(_ ctx: UnsafeMutablePointer<CCHmacContext>!, _ macOut: UnsafeMutableRawPointer!) {
    guard let box = ctx?.pointee.box, let macOut else { return }
    var length = Int(EVP_MAX_MD_SIZE)
    _ = EVP_DigestSignFinal(box.context, macOut.assumingMemoryBound(to: UInt8.self), &length)
    ctx?.pointee.box = nil
}

/// The HMAC of `algorithm` with `key` over `data`, written to `macOut` (as many bytes as the hash's
/// digest).
public func CCHmac(
    _ algorithm: CCHmacAlgorithm,
    _ key: UnsafeRawPointer!,
    _ keyLength: Int,
    _ data: UnsafeRawPointer!,
    _ dataLength: Int,
    _ macOut: UnsafeMutableRawPointer!
) {
    var context = CCHmacContext()
    CCHmacInit(&context, algorithm, key, keyLength)
    CCHmacUpdate(&context, data, dataLength)
    CCHmacFinal(&context, macOut)
}

// MARK: - Status codes

/// The result of a CommonCrypto cipher or key-derivation call.
public typealias CCCryptorStatus = Int32
/// The operation succeeded.
public let kCCSuccess: CCCryptorStatus = 0
/// A parameter was wrong (an unknown algorithm, a bad key or IV length).
public let kCCParamError: CCCryptorStatus = -4300
/// The output buffer is too small; the needed size is returned in the moved-bytes count.
public let kCCBufferTooSmall: CCCryptorStatus = -4301
/// Memory could not be allocated.
public let kCCMemoryFailure: CCCryptorStatus = -4302
/// The input is not a multiple of the block size and padding is off.
public let kCCAlignmentError: CCCryptorStatus = -4303
/// Decryption failed: the padding is wrong (a wrong key, or changed data).
public let kCCDecodeError: CCCryptorStatus = -4304
/// The operation or mode is not implemented.
public let kCCUnimplemented: CCCryptorStatus = -4305

// MARK: - PBKDF2

/// A password-based key-derivation function (`kCCPBKDF2`).
public typealias CCPBKDFAlgorithm = UInt32
/// The pseudo-random function of PBKDF2 (`kCCPRFHmacAlgSHA256`, ...).
public typealias CCPseudoRandomAlgorithm = UInt32
/// PBKDF2 (RFC 8018).
public let kCCPBKDF2 = 2
/// PBKDF2 with HMAC-SHA-1.
public let kCCPRFHmacAlgSHA1 = 1
/// PBKDF2 with HMAC-SHA-224.
public let kCCPRFHmacAlgSHA224 = 2
/// PBKDF2 with HMAC-SHA-256.
public let kCCPRFHmacAlgSHA256 = 3
/// PBKDF2 with HMAC-SHA-384.
public let kCCPRFHmacAlgSHA384 = 4
/// PBKDF2 with HMAC-SHA-512.
public let kCCPRFHmacAlgSHA512 = 5

/// PBKDF2 (RFC 8018) with HMAC over the pseudo-random function's hash.
@discardableResult
public func CCKeyDerivationPBKDF(
    _ algorithm: CCPBKDFAlgorithm,
    _ password: UnsafePointer<CChar>!,
    _ passwordLen: Int,
    _ salt: UnsafePointer<UInt8>!,
    _ saltLen: Int,
    _ prf: CCPseudoRandomAlgorithm,
    _ rounds: UInt32,
    _ derivedKey: UnsafeMutablePointer<UInt8>!,
    _ derivedKeyLen: Int
) -> Int32 {
    guard Int(algorithm) == kCCPBKDF2, rounds > 0, let derivedKey, derivedKeyLen > 0 else { return kCCParamError }
    let digest: OpaquePointer?
    switch Int(prf) {
    case kCCPRFHmacAlgSHA1: digest = EVP_sha1()
    case kCCPRFHmacAlgSHA224: digest = EVP_sha224()
    case kCCPRFHmacAlgSHA256: digest = EVP_sha256()
    case kCCPRFHmacAlgSHA384: digest = EVP_sha384()
    case kCCPRFHmacAlgSHA512: digest = EVP_sha512()
    default: return kCCParamError
    }
    let empty: [UInt8] = [0]
    let ok = empty.withUnsafeBufferPointer { nothing -> Int32 in
        PKCS5_PBKDF2_HMAC(
            password ?? UnsafeRawPointer(nothing.baseAddress!).assumingMemoryBound(to: CChar.self),
            Int32(clamping: passwordLen),
            salt ?? nothing.baseAddress,
            Int32(clamping: saltLen),
            Int32(clamping: rounds),
            digest,
            Int32(clamping: derivedKeyLen),
            derivedKey
        )
    }
    return ok == 1 ? kCCSuccess : kCCParamError
}

// MARK: - AES

/// Encrypt or decrypt (`kCCEncrypt`, `kCCDecrypt`).
public typealias CCOperation = UInt32
/// A cipher (`kCCAlgorithmAES`).
public typealias CCAlgorithm = UInt32
/// Cipher options (`kCCOptionPKCS7Padding`, `kCCOptionECBMode`).
public typealias CCOptions = UInt32
/// Encrypt.
public let kCCEncrypt = 0
/// Decrypt.
public let kCCDecrypt = 1
/// AES; the key size chooses AES-128, AES-192 or AES-256.
public let kCCAlgorithmAES = 0
/// AES (the old name: the key size still chooses the variant).
public let kCCAlgorithmAES128 = 0
/// PKCS #7 padding.
public let kCCOptionPKCS7Padding = 1
/// ECB mode instead of CBC (each block on its own; avoid for anything but single blocks).
public let kCCOptionECBMode = 2
/// The key size of AES-128, in bytes.
public let kCCKeySizeAES128 = 16
/// The key size of AES-192, in bytes.
public let kCCKeySizeAES192 = 24
/// The key size of AES-256, in bytes.
public let kCCKeySizeAES256 = 32
/// The block size of AES, in bytes.
public let kCCBlockSizeAES128 = 16

/// One-shot AES (CBC, or ECB with `kCCOptionECBMode`; PKCS#7 padding with
/// `kCCOptionPKCS7Padding`). A nil IV is all zeros, as on Apple. Other algorithms are
/// `kCCUnimplemented`.
@discardableResult
public func CCCrypt(
    _ op: CCOperation,
    _ alg: CCAlgorithm,
    _ options: CCOptions,
    _ key: UnsafeRawPointer!,
    _ keyLength: Int,
    _ iv: UnsafeRawPointer!,
    _ dataIn: UnsafeRawPointer!,
    _ dataInLength: Int,
    _ dataOut: UnsafeMutableRawPointer!,
    _ dataOutAvailable: Int,
    _ dataOutMoved: UnsafeMutablePointer<Int>!
) -> CCCryptorStatus {
    guard Int(alg) == kCCAlgorithmAES else { return kCCUnimplemented }
    guard Int(op) == kCCEncrypt || Int(op) == kCCDecrypt, let key, dataInLength >= 0,
        dataIn != nil || dataInLength == 0
    else { return kCCParamError }
    let ecb = Int(options) & kCCOptionECBMode != 0
    let padding = Int(options) & kCCOptionPKCS7Padding != 0
    let cipher: OpaquePointer?
    switch (keyLength, ecb) {
    case (kCCKeySizeAES128, false): cipher = EVP_aes_128_cbc()
    case (kCCKeySizeAES192, false): cipher = EVP_aes_192_cbc()
    case (kCCKeySizeAES256, false): cipher = EVP_aes_256_cbc()
    case (kCCKeySizeAES128, true): cipher = EVP_aes_128_ecb()
    case (kCCKeySizeAES192, true): cipher = EVP_aes_192_ecb()
    case (kCCKeySizeAES256, true): cipher = EVP_aes_256_ecb()
    default: return kCCParamError
    }
    if !padding && dataInLength % kCCBlockSizeAES128 != 0 { return kCCAlignmentError }
    let needed = dataInLength + (Int(op) == kCCEncrypt && padding ? kCCBlockSizeAES128 : 0)
    if needed > dataOutAvailable && Int(op) == kCCEncrypt { return kCCBufferTooSmall }
    guard let context = EVP_CIPHER_CTX_new() else { return kCCMemoryFailure }
    defer { EVP_CIPHER_CTX_free(context) }
    let zeros = [UInt8](repeating: 0, count: kCCBlockSizeAES128)
    let started = zeros.withUnsafeBytes { zeroIV -> Bool in
        let vector = (iv ?? zeroIV.baseAddress!).assumingMemoryBound(to: UInt8.self)
        return EVP_CipherInit_ex(
            context,
            cipher,
            nil,
            key.assumingMemoryBound(to: UInt8.self),
            ecb ? nil : vector,
            Int(op) == kCCEncrypt ? 1 : 0
        ) == 1
    }
    guard started else { return kCCParamError }
    EVP_CIPHER_CTX_set_padding(context, padding ? 1 : 0)
    // OpenSSL may write up to a block beyond the input while decrypting: work in a buffer of its own.
    var buffer = [UInt8](repeating: 0, count: dataInLength + kCCBlockSizeAES128)
    var written: Int32 = 0
    var total = 0
    let empty: [UInt8] = [0]
    let updated = buffer.withUnsafeMutableBufferPointer { out -> Bool in
        let done = empty.withUnsafeBytes { nothing -> Bool in
            let input = (dataIn ?? nothing.baseAddress!).assumingMemoryBound(to: UInt8.self)
            return EVP_CipherUpdate(context, out.baseAddress, &written, input, Int32(clamping: dataInLength)) == 1
        }
        guard done else { return false }
        total = Int(written)
        guard EVP_CipherFinal_ex(context, out.baseAddress! + total, &written) == 1 else { return false }
        total += Int(written)
        return true
    }
    guard updated else { return kCCDecodeError }
    guard total <= dataOutAvailable, let dataOut else {
        dataOutMoved?.pointee = total
        return kCCBufferTooSmall
    }
    buffer.withUnsafeBytes { dataOut.copyMemory(from: $0.baseAddress!, byteCount: total) }
    dataOutMoved?.pointee = total
    return kCCSuccess
}
