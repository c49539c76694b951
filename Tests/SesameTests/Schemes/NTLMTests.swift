import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// NTLM's pieces against the published vectors: MD4 (RFC 1320 appendix A.5) and NTLMv2
/// (MS-NLMP section 4.2.4: user "User", domain "Domain", password "Password", server challenge
/// 0123456789abcdef, client challenge aa..aa, time 0), and the CHALLENGE parser on bad input.
@Suite struct NTLMTests {
    private func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }
    private func bytes(_ hex: String) -> [UInt8] {
        var result: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            result.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return result
    }

    @Test func md4MatchesRFC1320() {
        let vectors = [
            "": "31d6cfe0d16ae931b73c59d7e0c089c0",
            "a": "bde52cb31de33e46245e05fbdbd6fb24",
            "abc": "a448017aaf21d8525fc10ae87aa6729d",
            "message digest": "d9130a8164549fe818874806e1c7014b",
            "abcdefghijklmnopqrstuvwxyz": "d79e1c308aa5bbcdeea8ed63df412da9",
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789": "043f8582f241db351ce627e153e7f0e4",
            String(repeating: "1234567890", count: 8): "e33b4ddc9c38f2199c3e7b164fcc0536",
        ]
        for (message, digest) in vectors { #expect(hex(MD4.hash(Array(message.utf8))) == digest, "\(message)") }
    }

    @Test func hmacMD5MatchesRFC2202() {
        #expect(
            hex(NTLMv2.hmacMD5(key: Array("Jefe".utf8), Array("what do ya want for nothing?".utf8)))
                == "750c783e6ab0b503eaa86e310a5db738"
        )
        let longKey = [UInt8](repeating: 0xAA, count: 80)
        let message = Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8)
        #expect(hex(NTLMv2.hmacMD5(key: longKey, message)) == "6b1ab7fe4bd7bf8f0b62e6ce61b9d0cd")
    }

    /// MS-NLMP 4.2.4.1.1 and 4.2.4.2: the keys and both responses.
    @Test func ntlmv2MatchesMSNLMP() {
        #expect(hex(MD4.hash(NTLMMessage.utf16LE("Password"))) == "a4f49c406510bdcab6824ee7c30fd852")
        let key = NTLMv2.responseKey(password: "Password", user: "User", domain: "Domain")
        #expect(hex(key) == "0c868a403bfd7a93a3001ef22ef02e3f")
        let responses = NTLMv2.responses(
            key: key,
            serverChallenge: bytes("0123456789abcdef"),
            clientChallenge: [UInt8](repeating: 0xAA, count: 8),
            time: [UInt8](repeating: 0, count: 8),
            targetInfo: [
                .init(id: 2, value: NTLMMessage.utf16LE("Domain")), .init(id: 1, value: NTLMMessage.utf16LE("Server")),
            ],
            serverSentTime: false
        )
        #expect(hex(Array(responses.nt.prefix(16))) == "68cd0ab851e51c96aabc927bebef6a1c")
        #expect(
            hex(Array(responses.nt.dropFirst(16)))
                == "01010000000000000000000000000000aaaaaaaaaaaaaaaa0000000002000c0044006f006d00610069006e0001000c005300650072007600650072000000000000000000"
        )
        #expect(hex(responses.lm) == "86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa")
        #expect(hex(responses.sessionBaseKey) == "8de40ccadbc14a82f15cb0ad0de95ca3")
        // The user name is not case-sensitive; the domain is.
        #expect(NTLMv2.responseKey(password: "Password", user: "USER", domain: "Domain") == key)
        #expect(NTLMv2.responseKey(password: "Password", user: "User", domain: "DOMAIN") != key)
    }

    /// A CHALLENGE message with `targetInfo` (end-of-list added) and `flags`.
    private func challenge(
        flags: UInt32 = 0xE28A_8235,
        targetInfo: [UInt8]? = nil,
        serverChallenge: [UInt8] = [0x01, 0x23, 0x45, 0x67, 0x89, 0xAB, 0xCD, 0xEF]
    ) -> [UInt8] {
        let info =
            targetInfo ?? (bytes("02000c0044006f006d00610069006e0001000c00530065007200760065007200") + [0, 0, 0, 0])
        var message = NTLMMessage.signature
        message.appendLE32(2)
        message += [0, 0, 0, 0, 56, 0, 0, 0]  // target name: empty
        message.appendLE32(flags)
        message += serverChallenge + [UInt8](repeating: 0, count: 8)
        message.appendLE16(UInt16(info.count))
        message.appendLE16(UInt16(info.count))
        message.appendLE32(56)
        message += NTLMMessage.version
        return message + info
    }

    @Test func anExchangeAnswersTheChallengeWithNTLMv2() throws {
        let exchange = NTLMExchange(
            user: "Domain\\User",
            password: "Password",
            clientChallenge: { [UInt8](repeating: 0xAA, count: 8) },
            clock: { [UInt8](repeating: 0, count: 8) }
        )
        try exchange.step(nil, channelBinding: nil)
        let negotiate = exchange.token
        #expect(Array(negotiate.prefix(8)) == NTLMMessage.signature)
        #expect(negotiate[8] == 1)
        #expect(!exchange.isEstablished)
        try exchange.step(challenge(), channelBinding: nil)
        #expect(exchange.isEstablished)
        let message = exchange.token
        #expect(message[8] == 3)
        func field(_ offset: Int) -> [UInt8] {
            let length = Int(message[offset]) | Int(message[offset + 1]) << 8
            let start = Int(message[offset + 4]) | Int(message[offset + 5]) << 8
            return Array(message[start..<start + length])
        }
        #expect(hex(field(12)) == "86c35097ac9cec102554764a57cccc19aaaaaaaaaaaaaaaa")
        #expect(hex(Array(field(20).prefix(16))) == "68cd0ab851e51c96aabc927bebef6a1c")
        #expect(field(28) == NTLMMessage.utf16LE("Domain"))
        #expect(field(36) == NTLMMessage.utf16LE("User"))
        // No server clock, so no MIC.
        #expect(message[72..<88].allSatisfy { $0 == 0 })
        // A third token is out of turn.
        #expect(throws: SesameError.self) { try exchange.step(challenge(), channelBinding: nil) }
    }

    @Test func aServerClockBringsAMICAndNoLMResponse() throws {
        let exchange = NTLMExchange(user: "Domain\\User", password: "Password")
        try exchange.step(nil, channelBinding: nil)
        let negotiate = exchange.token
        let timestamp: [UInt8] = [0x07, 0x00, 0x08, 0x00, 1, 2, 3, 4, 5, 6, 7, 8]
        let info = bytes("02000c0044006f006d00610069006e00") + timestamp + [0, 0, 0, 0]
        let challengeBytes = challenge(targetInfo: info)
        try exchange.step(challengeBytes, channelBinding: nil)
        var message = exchange.token
        let lmStart = Int(message[16]) | Int(message[17]) << 8
        #expect(message[lmStart..<lmStart + 24].allSatisfy { $0 == 0 })
        let ntLength = Int(message[20]) | Int(message[21]) << 8
        let ntStart = Int(message[24]) | Int(message[25]) << 8
        let nt = Array(message[ntStart..<ntStart + ntLength])
        // The blob carries the server's clock and MsvAvFlags with the MIC bit.
        #expect(Array(nt[24..<32]) == [1, 2, 3, 4, 5, 6, 7, 8])
        #expect(hex(nt).contains("0600040002000000"))
        // The MIC is HMAC-MD5 over the three messages with the MIC zeroed, keyed with the
        // session base key (no key exchange).
        let mic = Array(message[72..<88])
        message.replaceSubrange(72..<88, with: [UInt8](repeating: 0, count: 16))
        let key = NTLMv2.responseKey(password: "Password", user: "User", domain: "Domain")
        let baseKey = NTLMv2.hmacMD5(key: key, Array(nt.prefix(16)))
        #expect(mic == NTLMv2.hmacMD5(key: baseKey, negotiate + challengeBytes + message))
    }

    /// RFC 5929: "tls-server-end-point:" and the certificate's hash (SHA-256 for a certificate
    /// signed with ECDSA-SHA256, and for SHA-1 or MD5 ones).
    @Test func channelBindingsNameTheServerCertificate() throws {
        let leaf = try TestPKI().leaf().certificate
        let binding = ChannelBinding.tlsServerEndPoint(leaf)
        let prefix = Array("tls-server-end-point:".utf8)
        #expect(Array(binding.prefix(prefix.count)) == prefix)
        #expect(Array(binding.dropFirst(prefix.count)) == sha256Digest([UInt8](leaf.derEncoded)))
        // In NTLM, MsvAvChannelBindings is MD5 over the bindings structure: 16 zero bytes (no
        // addresses), the application data's length and the data.
        let exchange = NTLMExchange(user: "Domain\\User", password: "Password")
        try exchange.step(nil, channelBinding: binding)
        try exchange.step(challenge(), channelBinding: binding)
        let message = exchange.token
        let ntLength = Int(message[20]) | Int(message[21]) << 8
        let ntStart = Int(message[24]) | Int(message[25]) << 8
        let nt = hex(Array(message[ntStart..<ntStart + ntLength]))
        var structure = [UInt8](repeating: 0, count: 16)
        structure.appendLE32(UInt32(binding.count))
        var md5 = DigestHasher(.md5)
        md5.update(structure + binding)
        #expect(nt.contains("0a001000" + hex(md5.finalize())))
    }

    @Test func badChallengesAreRefusedByName() {
        let good = challenge()
        let cases: [(String, [UInt8])] = [
            ("is not an NTLMSSP message", Array(good.prefix(20))),
            ("is not an NTLMSSP message", [0x4D] + Array(good.dropFirst())),
            ("is of type 1, not 2", Array(good[0..<8]) + [1, 0, 0, 0] + Array(good[12...])),
            ("offers only 8-bit (OEM) strings", challenge(flags: 0xE28A_8236)),
            ("names target information past its end", Array(good.prefix(good.count - 4))),
            ("has a target information pair past its end", challenge(targetInfo: [2, 0, 200, 0, 0, 0, 0, 0])),
            ("without its end-of-list pair", challenge(targetInfo: [2, 0, 2, 0, 0x41, 0])),
        ]
        for (expected, message) in cases {
            #expect {
                _ = try NTLMMessage.Challenge(parsing: message)
            } throws: { error in
                (error as? SesameError)?.code == .protocolError && "\(error)".contains(expected)
            }
        }
    }

    /// A server whose target information fills its 16-bit field leaves the NT response no room
    /// for the pairs the client adds: a clear error, not a trap.
    @Test func aChallengeTooLargeToAnswerIsRefused() throws {
        let length = Int(UInt16.max) - 8
        var info: [UInt8] = [1, 0]
        info.appendLE16(UInt16(length))
        info += [UInt8](repeating: 0x41, count: length) + [0, 0, 0, 0]
        let exchange = NTLMExchange(user: "Domain\\User", password: "Password")
        try exchange.step(nil, channelBinding: nil)
        #expect {
            try exchange.step(challenge(targetInfo: info), channelBinding: nil)
        } throws: { error in
            (error as? SesameError)?.code == .protocolError && "\(error)".contains("more than NTLM's 65,535")
        }
        #expect(!exchange.isEstablished)
        // A user name past 32,767 UTF-16 units is refused the same way.
        let long = NTLMExchange(user: String(repeating: "u", count: 40_000), password: "Password")
        try long.step(nil, channelBinding: nil)
        #expect(throws: SesameError.self) { try long.step(challenge(), channelBinding: nil) }
    }

    @Test func userNamesSplitAsWindowsSendsThem() {
        #expect(NTLMExchange.split("SESAME\\carol") == ("carol", "SESAME"))
        #expect(NTLMExchange.split("carol@sesame.test") == ("carol@sesame.test", ""))
        #expect(NTLMExchange.split("carol") == ("carol", ""))
    }
}
