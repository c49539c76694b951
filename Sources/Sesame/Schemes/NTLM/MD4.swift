/// MD4 (RFC 1320), for NTLM's password hash only: OpenSSL 3 keeps MD4 in its legacy provider,
/// which Sesame does not load. MD4 is broken as a hash; NTLM uses it as a key derivation step
/// that its protocol fixes.
enum MD4 {
    /// The 16-byte digest of `message`.
    static func hash(_ message: [UInt8]) -> [UInt8] {
        var state: (UInt32, UInt32, UInt32, UInt32) = (0x6745_2301, 0xEFCD_AB89, 0x98BA_DCFE, 0x1032_5476)
        var padded = message
        padded.append(0x80)
        while padded.count % 64 != 56 { padded.append(0) }
        let bits = UInt64(message.count) &* 8
        for shift in stride(from: 0, to: 64, by: 8) { padded.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        var words = [UInt32](repeating: 0, count: 16)
        for block in stride(from: 0, to: padded.count, by: 64) {
            for index in 0..<16 {
                let offset = block + index * 4
                words[index] =
                    UInt32(padded[offset]) | UInt32(padded[offset + 1]) << 8 | UInt32(padded[offset + 2]) << 16
                    | UInt32(padded[offset + 3]) << 24
            }
            state = compress(state, words)
        }
        var digest: [UInt8] = []
        digest.reserveCapacity(16)
        for word in [state.0, state.1, state.2, state.3] {
            for shift in stride(from: 0, to: 32, by: 8) {
                digest.append(UInt8(truncatingIfNeeded: word >> UInt32(shift)))
            }
        }
        return digest
    }

    /// The three rounds over one 64-byte block (RFC 1320 section 3.4).
    private static func compress(
        _ state: (UInt32, UInt32, UInt32, UInt32),
        _ x: [UInt32]
    ) -> (UInt32, UInt32, UInt32, UInt32) {
        var (a, b, c, d) = state
        func rotate(_ value: UInt32, _ count: UInt32) -> UInt32 { value << count | value >> (32 - count) }
        // Round 1: F(x, y, z) = xy | ~xz.
        for index in [0, 4, 8, 12] {
            a = rotate(a &+ ((b & c) | (~b & d)) &+ x[index], 3)
            d = rotate(d &+ ((a & b) | (~a & c)) &+ x[index + 1], 7)
            c = rotate(c &+ ((d & a) | (~d & b)) &+ x[index + 2], 11)
            b = rotate(b &+ ((c & d) | (~c & a)) &+ x[index + 3], 19)
        }
        // Round 2: G(x, y, z) = xy | xz | yz, plus 0x5A827999.
        for index in [0, 1, 2, 3] {
            a = rotate(a &+ ((b & c) | (b & d) | (c & d)) &+ x[index] &+ 0x5A82_7999, 3)
            d = rotate(d &+ ((a & b) | (a & c) | (b & c)) &+ x[index + 4] &+ 0x5A82_7999, 5)
            c = rotate(c &+ ((d & a) | (d & b) | (a & b)) &+ x[index + 8] &+ 0x5A82_7999, 9)
            b = rotate(b &+ ((c & d) | (c & a) | (d & a)) &+ x[index + 12] &+ 0x5A82_7999, 13)
        }
        // Round 3: H(x, y, z) = x ^ y ^ z, plus 0x6ED9EBA1.
        for index in [0, 2, 1, 3] {
            a = rotate(a &+ (b ^ c ^ d) &+ x[index] &+ 0x6ED9_EBA1, 3)
            d = rotate(d &+ (a ^ b ^ c) &+ x[index + 8] &+ 0x6ED9_EBA1, 9)
            c = rotate(c &+ (d ^ a ^ b) &+ x[index + 4] &+ 0x6ED9_EBA1, 11)
            b = rotate(b &+ (c ^ d ^ a) &+ x[index + 12] &+ 0x6ED9_EBA1, 15)
        }
        return (state.0 &+ a, state.1 &+ b, state.2 &+ c, state.3 &+ d)
    }
}
