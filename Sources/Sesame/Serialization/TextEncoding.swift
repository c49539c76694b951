import FoundationEssentials
import Glibc

/// A character encoding for request parameters and response text, by its IANA name (the
/// `charset` of a Content-Type), converted strictly through the C library's `iconv`.
///
/// Foundation on Linux knows only some of these encodings (GBK and EUC-JP not at all) and decodes
/// some invalid bytes without complaint (a lone 0x80 as "€" in GB18030); `iconv` knows them all and
/// refuses what is not valid. Encoding a character the encoding cannot represent and decoding bytes
/// that are not valid in it are errors naming the character or byte offset, never substitutions.
public struct TextEncoding: Hashable, Sendable, CustomStringConvertible {
    /// The IANA name, as written in a Content-Type's `charset` (e.g. "GB18030", "UTF-8").
    public let name: String
    /// The name `iconv` knows it by.
    let iconvName: String

    /// UTF-8.
    public static let utf8 = TextEncoding(name: "UTF-8", iconvName: "UTF-8")
    /// GB 18030, the Chinese national standard (a superset of GBK).
    public static let gb18030 = TextEncoding(name: "GB18030", iconvName: "GB18030")
    /// GBK, simplified Chinese.
    public static let gbk = TextEncoding(name: "GBK", iconvName: "GBK")
    /// Big5, traditional Chinese.
    public static let big5 = TextEncoding(name: "Big5", iconvName: "BIG5")
    /// Shift_JIS, Japanese.
    public static let shiftJIS = TextEncoding(name: "Shift_JIS", iconvName: "SHIFT_JIS")
    /// EUC-JP, Japanese.
    public static let eucJP = TextEncoding(name: "EUC-JP", iconvName: "EUC-JP")
    /// EUC-KR, Korean.
    public static let eucKR = TextEncoding(name: "EUC-KR", iconvName: "EUC-KR")
    /// ISO 8859-1 (Latin-1).
    public static let isoLatin1 = TextEncoding(name: "ISO-8859-1", iconvName: "ISO-8859-1")
    /// Windows code page 1252 (what browsers use for a page labelled ISO 8859-1).
    public static let windows1252 = TextEncoding(name: "windows-1252", iconvName: "CP1252")
    /// US-ASCII.
    public static let ascii = TextEncoding(name: "US-ASCII", iconvName: "ASCII")

    private static let known: [TextEncoding] = [
        .utf8, .gb18030, .gbk, .big5, .shiftJIS, .eucJP, .eucKR, .isoLatin1, .windows1252, .ascii,
    ]

    /// Other names of the encodings above, lowercased (IANA aliases and common spellings).
    private static let aliases: [String: TextEncoding] = [
        "utf8": .utf8, "gb2312": .gbk, "cp936": .gbk, "ms936": .gbk, "windows-936": .gbk, "x-gbk": .gbk,
        "big-5": .big5, "cp950": .big5, "sjis": .shiftJIS, "shift-jis": .shiftJIS, "ms_kanji": .shiftJIS,
        "x-sjis": .shiftJIS, "euc_jp": .eucJP, "eucjp": .eucJP, "euc_kr": .eucKR, "euckr": .eucKR,
        "latin1": .isoLatin1, "iso_8859-1": .isoLatin1, "iso8859-1": .isoLatin1, "l1": .isoLatin1,
        "cp1252": .windows1252, "ascii": .ascii, "us-ascii": .ascii,
    ]

    init(name: String, iconvName: String) {
        self.name = name
        self.iconvName = iconvName
    }

    /// The encoding an IANA charset name stands for: the ones above and their aliases, or any
    /// other name `iconv` accepts (ISO-8859-5, KOI8-R, windows-1251, ...).
    /// - Throws: ``SesameError/Code/invalidArgument`` for a name nothing knows.
    public init(ianaName: String) throws {
        let trimmed = ianaName.trimming([" ", "\t", "\"", "'"])
        let lowered = trimmed.lowercased()
        if let known = Self.known.first(where: { $0.name.lowercased() == lowered }) ?? Self.aliases[lowered] {
            self = known
            return
        }
        guard !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F && $0 != UInt8(ascii: "/") }) else {
            throw SesameError(.invalidArgument, "'\(ianaName)' is not a character encoding name")
        }
        let descriptor = iconv_open("UTF-8", trimmed)
        guard descriptor != iconv_t(bitPattern: -1) else {
            throw SesameError(.invalidArgument, "the character encoding '\(trimmed)' is not known")
        }
        iconv_close(descriptor)
        self.init(name: trimmed, iconvName: trimmed)
    }

    /// The encoding for a Foundation `String.Encoding` (the ones above, GB18030 and GBK as the
    /// `CFStringConvertEncodingToNSStringEncoding` values Apple code uses), or nil.
    public init?(_ encoding: String.Encoding) {
        switch encoding {
        case .utf8: self = .utf8
        case .ascii: self = .ascii
        case .isoLatin1: self = .isoLatin1
        case .windowsCP1252: self = .windows1252
        case .shiftJIS: self = .shiftJIS
        case .japaneseEUC: self = .eucJP
        case .gb18030: self = .gb18030
        case .gbk: self = .gbk
        case .big5: self = .big5
        case .eucKR: self = .eucKR
        default: return nil
        }
    }

    public var description: String { name }

    /// `string` in this encoding.
    /// - Throws: ``SesameError/Code/textEncodingFailed`` naming the first character that has no
    ///   representation here.
    public func encode(_ string: String) throws -> [UInt8] {
        if self == .utf8 { return Array(string.utf8) }
        do {
            return try Self.convert(Array(string.utf8), from: "UTF-8", to: iconvName)
        } catch let failure as ConversionFailure {
            let prefix = String(decoding: Array(string.utf8)[0..<failure.offset], as: UTF8.self)
            let character = string.dropFirst(prefix.count).first.map { String($0) } ?? "?"
            let scalars = character.unicodeScalars.map { "U+" + String($0.value, radix: 16, uppercase: true) }
            throw SesameError(
                .textEncodingFailed,
                "'\(character)' (\(scalars.joined(separator: " "))) cannot be written in \(name)"
            )
        }
    }

    /// `bytes` read as this encoding.
    /// - Throws: ``SesameError/Code/textDecodingFailed`` with the offset of the first byte that is
    ///   not valid here (or of an incomplete sequence at the end).
    public func decode(_ bytes: [UInt8]) throws -> String {
        do {
            let utf8 = self == .utf8 ? bytes : try Self.convert(bytes, from: iconvName, to: "UTF-8")
            guard let string = String(validating: utf8, as: UTF8.self) else {
                throw ConversionFailure(offset: Self.firstInvalidUTF8Offset(utf8), incomplete: false)
            }
            return string
        } catch let failure as ConversionFailure {
            let what = failure.incomplete ? "ends in the middle of a character" : "is not valid"
            let shown = bytes[failure.offset..<min(bytes.count, failure.offset + 4)]
                .map { HexDigits.upper($0) }.joined(separator: " ")
            throw SesameError(
                .textDecodingFailed,
                "the text \(what) \(name) at byte \(failure.offset) of \(bytes.count) (\(shown))"
            )
        }
    }

    struct ConversionFailure: Error {
        let offset: Int
        let incomplete: Bool
    }

    private static func convert(_ bytes: [UInt8], from source: String, to target: String) throws -> [UInt8] {
        let descriptor = iconv_open(target, source)
        guard descriptor != iconv_t(bitPattern: -1) else {
            throw SesameError(.invalidArgument, "iconv cannot convert \(source) to \(target)")
        }
        defer { iconv_close(descriptor) }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count * 2 + 16)
        var scratch = [UInt8](repeating: 0, count: 16_384)
        var input = bytes
        var consumed = 0
        try input.withUnsafeMutableBytes { inputBuffer in
            var inLeft = inputBuffer.count
            var inPointer = inputBuffer.baseAddress?.assumingMemoryBound(to: CChar.self)
            while true {
                let (result, code, produced) = scratch.withUnsafeMutableBytes { outputBuffer in
                    var outLeft = outputBuffer.count
                    var outPointer = outputBuffer.baseAddress?.assumingMemoryBound(to: CChar.self)
                    let result =
                        inLeft == 0
                        ? iconv(descriptor, nil, nil, &outPointer, &outLeft)  // flush the shift state
                        : iconv(descriptor, &inPointer, &inLeft, &outPointer, &outLeft)
                    return (result, errno, outputBuffer.count - outLeft)
                }
                output += scratch[0..<produced]
                consumed = inputBuffer.count - inLeft
                if result != -1 {
                    if inLeft == 0 { break }
                    continue
                }
                switch code {
                case E2BIG: continue
                case EINVAL: throw ConversionFailure(offset: consumed, incomplete: true)
                default: throw ConversionFailure(offset: consumed, incomplete: false)
                }
            }
        }
        return output
    }

    private static func firstInvalidUTF8Offset(_ bytes: [UInt8]) -> Int {
        var offset = 0
        for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
            if scalar == "\u{FFFD}" { return offset }
            offset += String(scalar).utf8.count
        }
        return offset
    }
}

extension String.Encoding {
    /// GB 18030 (`kCFStringEncodingGB_18030_2000` through `CFStringConvertEncodingToNSStringEncoding`).
    public static let gb18030 = String.Encoding(rawValue: 0x8000_0632)
    /// GBK (`kCFStringEncodingGBK_95`).
    public static let gbk = String.Encoding(rawValue: 0x8000_0631)
    /// Big5 (`kCFStringEncodingBig5`).
    public static let big5 = String.Encoding(rawValue: 0x8000_0A03)
    /// EUC-KR (`kCFStringEncodingEUC_KR`).
    public static let eucKR = String.Encoding(rawValue: 0x8000_0940)
}
