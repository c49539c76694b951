import FoundationEssentials

/// NTLM's three messages (MS-NLMP section 2.2.1): the client's NEGOTIATE, the server's CHALLENGE
/// (parsed with every length and offset checked) and the client's AUTHENTICATE.
enum NTLMMessage {
    static let signature: [UInt8] = Array("NTLMSSP".utf8) + [0]

    /// The NegotiateFlags Sesame uses (MS-NLMP section 2.2.2.5).
    struct Flags: OptionSet, Sendable {
        let rawValue: UInt32
        static let unicode = Flags(rawValue: 0x0000_0001)
        static let requestTarget = Flags(rawValue: 0x0000_0004)
        static let ntlm = Flags(rawValue: 0x0000_0200)
        static let alwaysSign = Flags(rawValue: 0x0000_8000)
        static let extendedSessionSecurity = Flags(rawValue: 0x0008_0000)
        static let targetInfo = Flags(rawValue: 0x0080_0000)
        static let version = Flags(rawValue: 0x0200_0000)
        static let bits128 = Flags(rawValue: 0x2000_0000)
        static let bits56 = Flags(rawValue: 0x8000_0000)

        /// What the NEGOTIATE message asks for: Unicode strings, NTLMv2's extended session
        /// security, and a version field (so that the AUTHENTICATE message can carry a MIC).
        static let requested: Flags = [
            .unicode, .requestTarget, .ntlm, .alwaysSign, .extendedSessionSecurity, .version, .bits128, .bits56,
        ]
    }

    /// One AV_PAIR of a CHALLENGE's target information (MS-NLMP section 2.2.2.1).
    struct AVPair: Sendable, Equatable {
        static let endOfList: UInt16 = 0
        static let flags: UInt16 = 6
        static let timestamp: UInt16 = 7
        static let channelBindings: UInt16 = 10
        /// MsvAvFlags' bit saying the AUTHENTICATE message carries a MIC.
        static let micPresent: UInt32 = 0x2

        let id: UInt16
        let value: [UInt8]
    }

    /// A parsed CHALLENGE message.
    struct Challenge: Sendable {
        let flags: Flags
        let serverChallenge: [UInt8]
        /// The target information, without its end-of-list pair.
        let targetInfo: [AVPair]

        /// The server's clock (MsvAvTimestamp, a FILETIME), when it sent one: the client then uses
        /// it, sends no LMv2 response, and adds a MIC.
        var timestamp: [UInt8]? { targetInfo.first { $0.id == AVPair.timestamp && $0.value.count == 8 }?.value }

        /// Parses `bytes`.
        /// - Throws: ``SesameError/Code/protocolError`` naming what is wrong.
        init(parsing bytes: [UInt8]) throws(SesameError) {
            func refuse(_ why: String) -> SesameError {
                SesameError(.protocolError, "the NTLM CHALLENGE message \(why)")
            }
            guard bytes.count >= 32, Array(bytes[0..<8]) == signature else {
                throw refuse("is not an NTLMSSP message (\(bytes.count) bytes)")
            }
            guard bytes.le32(at: 8) == 2 else { throw refuse("is of type \(bytes.le32(at: 8)), not 2") }
            flags = Flags(rawValue: bytes.le32(at: 20))
            guard flags.contains(.unicode) else {
                throw refuse("offers only 8-bit (OEM) strings, which Sesame does not send")
            }
            serverChallenge = Array(bytes[24..<32])
            var pairs: [AVPair] = []
            if bytes.count >= 48, flags.contains(.targetInfo) {
                let length = Int(bytes.le16(at: 40))
                let offset = Int(bytes.le32(at: 44))
                guard offset <= bytes.count, length <= bytes.count - offset else {
                    throw refuse(
                        "names target information past its end (\(length) bytes at \(offset) of \(bytes.count))"
                    )
                }
                pairs = try Self.pairs(Array(bytes[offset..<offset + length]), refuse)
            }
            targetInfo = pairs
        }

        private static func pairs(
            _ info: [UInt8],
            _ refuse: (String) -> SesameError
        ) throws(SesameError) -> [AVPair] {
            var pairs: [AVPair] = []
            var index = 0
            // Each pair takes at least 4 bytes, so the loop ends within the field.
            while index + 4 <= info.count {
                let id = info.le16(at: index)
                let length = Int(info.le16(at: index + 2))
                index += 4
                if id == AVPair.endOfList { return pairs }
                guard length <= info.count - index else { throw refuse("has a target information pair past its end") }
                pairs.append(AVPair(id: id, value: Array(info[index..<index + length])))
                index += length
            }
            throw refuse("has target information without its end-of-list pair")
        }
    }

    /// The NEGOTIATE message: flags, no domain or workstation, and a version.
    static func negotiate() -> [UInt8] {
        var message = signature
        message.appendLE32(1)
        message.appendLE32(Flags.requested.rawValue)
        message += [UInt8](repeating: 0, count: 16)  // domain and workstation fields: empty
        message += version
        return message
    }

    /// Windows 10's version structure with NTLM revision 15, as clients send it.
    static let version: [UInt8] = [10, 0, 0x61, 0x4A, 0, 0, 0, 0x0F]

    /// The AUTHENTICATE message, with room for a MIC at offset 72 (zeros; see ``micOffset``).
    /// - Throws: ``SesameError/Code/protocolError`` when a field does not fit NTLM's 16-bit
    ///   lengths: a server's target information that fills its own field leaves no room for the
    ///   pairs the client adds, and a user or domain name may be too long.
    static func authenticate(
        flags: Flags,
        lmResponse: [UInt8],
        ntResponse: [UInt8],
        domain: String,
        user: String
    ) throws(SesameError) -> [UInt8] {
        let fields: [[UInt8]] = [lmResponse, ntResponse, utf16LE(domain), utf16LE(user), [], []]
        let names = ["LM response", "NT response (the server's target information)", "domain", "user name"]
        for (index, field) in fields.enumerated() where field.count > Int(UInt16.max) {
            throw SesameError(
                .protocolError,
                "the NTLM AUTHENTICATE message's \(names[index]) would take \(field.count) bytes, more than NTLM's 65,535"
            )
        }
        var message = signature
        message.appendLE32(3)
        var offset = 88
        var payload: [UInt8] = []
        for field in fields {
            message.appendLE16(UInt16(field.count))
            message.appendLE16(UInt16(field.count))
            message.appendLE32(UInt32(offset))
            payload += field
            offset += field.count
        }
        message.appendLE32(flags.rawValue)
        message += version
        message += [UInt8](repeating: 0, count: 16)  // the MIC
        return message + payload
    }

    /// Where the AUTHENTICATE message's MIC goes.
    static let micOffset = 72

    /// A string as NTLM's Unicode form: UTF-16, little-endian.
    static func utf16LE(_ text: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for unit in text.utf16 { bytes += [UInt8(truncatingIfNeeded: unit), UInt8(truncatingIfNeeded: unit >> 8)] }
        return bytes
    }
}

extension [UInt8] {
    fileprivate func le16(at offset: Int) -> UInt16 { UInt16(self[offset]) | UInt16(self[offset + 1]) << 8 }

    fileprivate func le32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) | UInt32(self[offset + 1]) << 8 | UInt32(self[offset + 2]) << 16
            | UInt32(self[offset + 3]) << 24
    }

    mutating func appendLE16(_ value: UInt16) { self += [UInt8(truncatingIfNeeded: value), UInt8(value >> 8)] }

    mutating func appendLE32(_ value: UInt32) {
        for shift in stride(from: 0, to: 32, by: 8) { append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
    }
}
