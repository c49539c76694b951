import FoundationEssentials
import Glibc

/// One NTLM exchange (MS-NLMP, NTLMv2 only): NEGOTIATE, then AUTHENTICATE in answer to the
/// server's CHALLENGE. The server binds the exchange to its connection, so both go on the
/// connection the CHALLENGE came on.
///
/// The user is `DOMAIN\user`, or `user@domain` (a user principal name, sent whole with an empty
/// domain, as Windows sends it), or a bare `user` with an empty domain. When the server sends its
/// clock, the AUTHENTICATE message carries a MIC over all three messages (MS-NLMP section 3.1.5.1.2).
final class NTLMExchange: SecurityExchange, @unchecked Sendable {
    // @unchecked: `state` is only touched while its lock is held.
    let user: String
    let domain: String
    private let password: String
    private let clientChallenge: @Sendable () -> [UInt8]
    private let clock: @Sendable () -> [UInt8]
    private let state = LockedValue(State())

    private struct State {
        var negotiate: [UInt8]?
        var token: [UInt8] = []
        var isEstablished = false
    }

    /// - Parameters:
    ///   - clientChallenge: 8 random bytes per exchange (tests pass fixed ones).
    ///   - clock: the time as a FILETIME, for servers that send none.
    init(
        user: String,
        password: String,
        clientChallenge: @escaping @Sendable () -> [UInt8] = NTLMExchange.randomChallenge,
        clock: @escaping @Sendable () -> [UInt8] = NTLMExchange.fileTimeNow
    ) {
        (self.user, domain) = Self.split(user)
        self.password = password
        self.clientChallenge = clientChallenge
        self.clock = clock
    }

    var scheme: String { "NTLM" }
    var provesServer: Bool { false }
    var summary: String { "NTLM (\(domain.isEmpty ? user : domain + "\\" + user))" }
    var token: [UInt8] { state.withLock { $0.token } }
    var isEstablished: Bool { state.withLock { $0.isEstablished } }

    func step(_ input: [UInt8]?, channelBinding: [UInt8]?) throws(SesameError) {
        let outcome = state.withLock { state -> Result<Void, SesameError> in
            switch (state.negotiate, input) {
            case (nil, nil):
                let negotiate = NTLMMessage.negotiate()
                (state.negotiate, state.token) = (negotiate, negotiate)
                return .success(())
            case (let negotiate?, let challenge?) where !state.isEstablished:
                do throws(SesameError) {
                    state.token = try authenticate(negotiate, challenge, channelBinding)
                    state.isEstablished = true
                    return .success(())
                } catch {
                    return .failure(error)
                }
            default:
                return .failure(SesameError(.protocolError, "the server sent an NTLM token out of turn"))
            }
        }
        try outcome.get()
    }

    /// The AUTHENTICATE message for the server's CHALLENGE `challengeBytes`, bound to the TLS
    /// connection `channelBinding` names (MsvAvChannelBindings).
    private func authenticate(
        _ negotiate: [UInt8],
        _ challengeBytes: [UInt8],
        _ channelBinding: [UInt8]?
    ) throws(SesameError) -> [UInt8] {
        let challenge = try NTLMMessage.Challenge(parsing: challengeBytes)
        let serverTime = challenge.timestamp
        var pairs = challenge.targetInfo.filter { $0.id != NTLMMessage.AVPair.channelBindings }
        if let channelBinding {
            pairs.append(.init(id: NTLMMessage.AVPair.channelBindings, value: ChannelBinding.ntlmHash(channelBinding)))
        }
        if serverTime != nil { pairs = Self.markingMIC(pairs) }
        let key = NTLMv2.responseKey(password: password, user: user, domain: domain)
        let responses = NTLMv2.responses(
            key: key,
            serverChallenge: challenge.serverChallenge,
            clientChallenge: clientChallenge(),
            time: serverTime ?? clock(),
            targetInfo: pairs,
            serverSentTime: serverTime != nil
        )
        var message = try NTLMMessage.authenticate(
            flags: NTLMMessage.Flags(rawValue: challenge.flags.rawValue & NTLMMessage.Flags.requested.rawValue),
            lmResponse: responses.lm,
            ntResponse: responses.nt,
            domain: domain,
            user: user
        )
        if serverTime != nil {
            let mic = NTLMv2.hmacMD5(key: responses.sessionBaseKey, negotiate + challengeBytes + message)
            message.replaceSubrange(NTLMMessage.micOffset..<NTLMMessage.micOffset + 16, with: mic)
        }
        return message
    }

    /// The target information with MsvAvFlags saying a MIC is present (added when the server sent
    /// none).
    static func markingMIC(_ pairs: [NTLMMessage.AVPair]) -> [NTLMMessage.AVPair] {
        var pairs = pairs
        let flagsIndex = pairs.firstIndex { $0.id == NTLMMessage.AVPair.flags && $0.value.count == 4 }
        var flags: UInt32 = 0
        if let flagsIndex {
            let value = pairs[flagsIndex].value
            flags = UInt32(value[0]) | UInt32(value[1]) << 8 | UInt32(value[2]) << 16 | UInt32(value[3]) << 24
        }
        var bytes: [UInt8] = []
        bytes.appendLE32(flags | NTLMMessage.AVPair.micPresent)
        let marked = NTLMMessage.AVPair(id: NTLMMessage.AVPair.flags, value: bytes)
        if let flagsIndex { pairs[flagsIndex] = marked } else { pairs.append(marked) }
        return pairs
    }

    /// `DOMAIN\user` as (user, DOMAIN); anything else (a bare user, `user@domain`) whole, with an
    /// empty domain.
    static func split(_ name: String) -> (user: String, domain: String) {
        guard let backslash = name.firstIndex(of: "\\") else { return (name, "") }
        return (String(name[name.index(after: backslash)...]), String(name[..<backslash]))
    }

    @Sendable static func randomChallenge() -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<8).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }

    /// Now as a FILETIME: 100-nanosecond intervals since 1601-01-01, little-endian.
    @Sendable static func fileTimeNow() -> [UInt8] {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let ticks = (UInt64(now.tv_sec) + 11_644_473_600) * 10_000_000 + UInt64(now.tv_nsec) / 100
        var bytes: [UInt8] = []
        for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: ticks >> UInt64(shift))) }
        return bytes
    }
}
