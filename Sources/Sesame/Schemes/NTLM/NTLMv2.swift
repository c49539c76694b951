/// NTLMv2's keys and responses (MS-NLMP section 3.3.2). LM and NTLMv1 are never computed.
enum NTLMv2 {
    /// What an AUTHENTICATE message carries, and the key its MIC is made with.
    struct Responses: Equatable {
        let nt: [UInt8]
        let lm: [UInt8]
        let sessionBaseKey: [UInt8]
    }

    /// NTOWFv2: HMAC-MD5 keyed with MD4(UTF-16LE(password)) over UTF-16LE(uppercase(user) + domain).
    static func responseKey(password: String, user: String, domain: String) -> [UInt8] {
        let ntHash = MD4.hash(NTLMMessage.utf16LE(password))
        return hmacMD5(key: ntHash, NTLMMessage.utf16LE(user.uppercased() + domain))
    }

    /// The NT and LM responses for `challenge` at `time` (a FILETIME, little-endian) with the
    /// client's 8 random bytes, over the target information `targetInfo` (the server's pairs as
    /// the client sends them back, without the end-of-list pair).
    static func responses(
        key: [UInt8],
        serverChallenge: [UInt8],
        clientChallenge: [UInt8],
        time: [UInt8],
        targetInfo: [NTLMMessage.AVPair],
        serverSentTime: Bool
    ) -> Responses {
        var blob: [UInt8] = [1, 1, 0, 0, 0, 0, 0, 0] + time + clientChallenge + [0, 0, 0, 0]
        for pair in targetInfo {
            blob.appendLE16(pair.id)
            blob.appendLE16(UInt16(pair.value.count))
            blob += pair.value
        }
        blob += [0, 0, 0, 0]  // MsvAvEOL
        blob += [0, 0, 0, 0]
        let proof = hmacMD5(key: key, serverChallenge + blob)
        // With the server's timestamp the LMv2 response is all zeros (MS-NLMP section 3.1.5.1.2).
        let lm =
            serverSentTime
            ? [UInt8](repeating: 0, count: 24)
            : hmacMD5(key: key, serverChallenge + clientChallenge) + clientChallenge
        return Responses(nt: proof + blob, lm: lm, sessionBaseKey: hmacMD5(key: key, proof))
    }

    /// HMAC (RFC 2104) over MD5.
    static func hmacMD5(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        var block = key.count > 64 ? md5(key) : key
        block += [UInt8](repeating: 0, count: 64 - block.count)
        let inner = md5(block.map { $0 ^ 0x36 } + message)
        return md5(block.map { $0 ^ 0x5C } + inner)
    }

    private static func md5(_ bytes: [UInt8]) -> [UInt8] {
        var hasher = DigestHasher(.md5)
        hasher.update(bytes)
        return hasher.finalize()
    }
}
