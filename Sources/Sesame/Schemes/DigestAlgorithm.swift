internal import COpenSSL
import FoundationEssentials
import Glibc

/// A Digest `algorithm` (RFC 7616 section 3.3): MD5, SHA-256 or SHA-512-256 (the FIPS 180-4
/// SHA-512/256, not a truncated SHA-512), each optionally `-sess`.
public struct DigestAlgorithm: Hashable, Sendable, CustomStringConvertible {
    /// The hash function of a Digest algorithm (RFC 7616 section 6.1).
    public enum Hash: String, Sendable, CaseIterable {
        /// MD5, the default when a challenge names no algorithm.
        case md5 = "MD5"
        /// SHA-256.
        case sha256 = "SHA-256"
        /// SHA-512/256 (SHA-512 truncated to 256 bits, with its own initial values).
        case sha512_256 = "SHA-512-256"
    }

    /// The hash function.
    public let hash: Hash
    /// The `-sess` variant: HA1 also covers the nonce and cnonce.
    public let isSession: Bool

    /// The algorithm of `hash`, in its `-sess` variant when `isSession` is true.
    public init(hash: Hash, isSession: Bool) {
        self.hash = hash
        self.isSession = isSession
    }

    /// Parses an `algorithm` value (case-insensitive); nil for anything else, which Sesame does
    /// not answer rather than guess.
    public init?(_ name: String) {
        let upper = name.uppercased()
        let base = upper.hasSuffix("-SESS") ? String(upper.dropLast(5)) : upper
        guard let hash = Hash(rawValue: base) else { return nil }
        self.hash = hash
        isSession = upper.hasSuffix("-SESS")
    }

    /// As it goes in the `algorithm` parameter.
    public var description: String { hash.rawValue + (isSession ? "-sess" : "") }

    /// Higher is stronger: SHA-512-256 > SHA-256 > MD5.
    var strength: Int {
        switch hash {
        case .md5: 1
        case .sha256: 2
        case .sha512_256: 3
        }
    }

    /// The lowercase hex digest of `bytes`.
    func hex(_ bytes: some Sequence<UInt8>) -> String {
        var hasher = DigestHasher(hash)
        hasher.update(bytes)
        return hasher.finalizeHex()
    }

    func hex(_ text: String) -> String { hex(joining: [text]) }

    /// The lowercase hex digest of `parts` joined with ":" (RFC 7616's `H(a:b:c)`), hashed part
    /// by part rather than joined into a new string first.
    func hex(joining parts: [String]) -> String {
        var hasher = DigestHasher(hash)
        for (index, part) in parts.enumerated() {
            if index > 0 { hasher.update(CollectionOfOne(UInt8(ascii: ":"))) }
            var part = part  // withUTF8 may make a native copy of a bridged string first
            part.withUTF8 { hasher.update($0) }
        }
        return hasher.finalizeHex()
    }

    /// RFC 7616's H(): the lowercase hex digest of `text`'s UTF-8 bytes with this algorithm's hash
    /// (for test servers and tools that check Digest answers).
    public func hash(_ text: String) -> String { hex(text) }
}

/// An incremental hash over OpenSSL's EVP interface (for bodies hashed as they stream).
struct DigestHasher: ~Copyable {
    private let context: OpaquePointer

    init(_ hash: DigestAlgorithm.Hash) {
        context = EVP_MD_CTX_new()!  // safe: fails only without memory
        let md: OpaquePointer? =
            switch hash {
            case .md5: FetchedDigests.md5 ?? EVP_md5()
            case .sha256: FetchedDigests.sha256 ?? EVP_sha256()
            case .sha512_256: FetchedDigests.sha512_256 ?? EVP_sha512_256()
            }
        EVP_DigestInit_ex(context, md, nil)
    }

    mutating func update(_ bytes: some Sequence<UInt8>) {
        let hashedInPlace: Bool? = bytes.withContiguousStorageIfAvailable { buffer in
            _ = EVP_DigestUpdate(context, buffer.baseAddress, buffer.count)
            return true
        }
        guard hashedInPlace == nil else { return }
        Array(bytes).withUnsafeBytes { _ = EVP_DigestUpdate(context, $0.baseAddress, $0.count) }
    }

    consuming func finalize() -> [UInt8] {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(EVP_MAX_MD_SIZE)) { digest in
            var length: UInt32 = 0
            EVP_DigestFinal_ex(context, digest.baseAddress, &length)
            return Array(digest[0..<Int(length)])
        }
    }

    consuming func finalizeHex() -> String {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: Int(EVP_MAX_MD_SIZE)) { digest in
            var length: UInt32 = 0
            EVP_DigestFinal_ex(context, digest.baseAddress, &length)
            return HexDigits.encode(UnsafeBufferPointer(rebasing: digest[0..<Int(length)]))
        }
    }

    deinit { EVP_MD_CTX_free(context) }
}

/// Hash methods fetched from OpenSSL's providers once: given `EVP_md5()` and the like, OpenSSL 3
/// looks the implementation up again on every initialization (a Digest exchange hashes several
/// times per request). Never freed; nil when a provider does not offer one (then the implicit
/// lookup reports the failure as before).
private enum FetchedDigests {
    // nonisolated(unsafe): written once by the static initializer; an EVP_MD is immutable and
    // safe to share between threads.
    nonisolated(unsafe) static let md5 = EVP_MD_fetch(nil, "MD5", nil)
    nonisolated(unsafe) static let sha256 = EVP_MD_fetch(nil, "SHA2-256", nil)
    nonisolated(unsafe) static let sha512_256 = EVP_MD_fetch(nil, "SHA2-512/256", nil)
}
