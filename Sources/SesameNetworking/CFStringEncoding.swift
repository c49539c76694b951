import Foundation

// The CoreFoundation text-encoding names Apple code uses to reach encodings outside
// `String.Encoding`'s named ones (seed 003's GB18030), with Apple's values. Foundation's
// `data(using:)` and `NSString(data:encoding:)` honour the `String.Encoding` they convert to.

/// A CoreFoundation text encoding, as a number (`kCFStringEncodingUTF8`, ...).
public typealias CFStringEncoding = UInt32

/// CoreFoundation's external encodings (`CFStringEncodings`), the ones apps name.
public enum CFStringEncodings: Int, Sendable {
    /// Mac OS traditional Chinese (Big5-based).
    case macChineseTrad = 0x0002
    /// Mac OS Japanese (Shift_JIS-based).
    case macJapanese = 0x0001
    /// Mac OS Korean (EUC-KR-based).
    case macKorean = 0x0003
    /// Mac OS simplified Chinese (GB 2312-based).
    case macChineseSimp = 0x0019
    /// DOS simplified Chinese (code page 936, GBK).
    case dosChineseSimplif = 0x0421
    /// DOS traditional Chinese (code page 950, Big5).
    case dosChineseTrad = 0x0423
    /// GB 2312-80, simplified Chinese.
    case GB_2312_80 = 0x0630
    /// GBK, simplified Chinese.
    case GBK_95 = 0x0631
    /// GB 18030, the Chinese national standard (a superset of GBK).
    case GB_18030_2000 = 0x0632
    /// Big5, traditional Chinese.
    case big5 = 0x0A03
    /// Big5 with the Hong Kong Supplementary Character Set.
    case big5_HKSCS_1999 = 0x0A06
    /// EUC-CN (GB 2312), simplified Chinese.
    case EUC_CN = 0x0930
    /// EUC-TW, traditional Chinese.
    case EUC_TW = 0x0931
    /// EUC-KR, Korean.
    case EUC_KR = 0x0940
    /// Shift_JIS, Japanese.
    case shiftJIS = 0x0A01
    /// KOI8-R, Russian.
    case KOI8_R = 0x0A02
    /// Windows code page 1250, Central European.
    case windowsLatin2 = 0x0501
    /// Windows code page 1251, Cyrillic.
    case windowsCyrillic = 0x0502
    /// Windows code page 1256, Arabic.
    case windowsArabic = 0x0506
    /// ISO 8859-2, Central European.
    case isoLatin2 = 0x0202
    /// ISO 8859-9, Turkish.
    case isoLatin5 = 0x0209
    /// ISO 8859-15, Western European with the euro sign.
    case isoLatin9 = 0x020F
}

/// GB 18030.
public let kCFStringEncodingGB_18030_2000 = CFStringEncoding(CFStringEncodings.GB_18030_2000.rawValue)
/// GBK.
public let kCFStringEncodingGBK_95 = CFStringEncoding(CFStringEncodings.GBK_95.rawValue)
/// Big5.
public let kCFStringEncodingBig5 = CFStringEncoding(CFStringEncodings.big5.rawValue)
/// UTF-8.
public let kCFStringEncodingUTF8: CFStringEncoding = 0x0800_0100
/// ISO 8859-1.
public let kCFStringEncodingISOLatin1: CFStringEncoding = 0x0201
/// Windows code page 1252.
public let kCFStringEncodingWindowsLatin1: CFStringEncoding = 0x0500
/// ASCII.
public let kCFStringEncodingASCII: CFStringEncoding = 0x0600
/// No encoding: what a conversion returns for a name or an encoding it does not know.
public let kCFStringEncodingInvalidId: CFStringEncoding = 0xFFFF_FFFF

/// The `NSStringEncoding` (a `String.Encoding` raw value) for a CoreFoundation encoding.
public func CFStringConvertEncodingToNSStringEncoding(_ encoding: CFStringEncoding) -> UInt {
    switch encoding {
    case kCFStringEncodingUTF8: String.Encoding.utf8.rawValue
    case kCFStringEncodingASCII: String.Encoding.ascii.rawValue
    case kCFStringEncodingISOLatin1: String.Encoding.isoLatin1.rawValue
    case kCFStringEncodingWindowsLatin1: String.Encoding.windowsCP1252.rawValue
    default: 0x8000_0000 | UInt(encoding)
    }
}

/// The CoreFoundation encoding for an `NSStringEncoding`.
public func CFStringConvertNSStringEncodingToEncoding(_ encoding: UInt) -> CFStringEncoding {
    switch encoding {
    case String.Encoding.utf8.rawValue: kCFStringEncodingUTF8
    case String.Encoding.ascii.rawValue: kCFStringEncodingASCII
    case String.Encoding.isoLatin1.rawValue: kCFStringEncodingISOLatin1
    case String.Encoding.windowsCP1252.rawValue: kCFStringEncodingWindowsLatin1
    default: encoding & 0x8000_0000 != 0 ? CFStringEncoding(encoding & 0x7FFF_FFFF) : kCFStringEncodingInvalidId
    }
}

/// The IANA charset name (`gb18030`) for a CoreFoundation encoding, for `Content-Type`.
public func CFStringConvertEncodingToIANACharSetName(_ encoding: CFStringEncoding) -> CFString? {
    let names: [CFStringEncoding: String] = [
        kCFStringEncodingUTF8: "utf-8", kCFStringEncodingASCII: "us-ascii", kCFStringEncodingISOLatin1: "iso-8859-1",
        kCFStringEncodingWindowsLatin1: "windows-1252", kCFStringEncodingGB_18030_2000: "gb18030",
        kCFStringEncodingGBK_95: "gbk", kCFStringEncodingBig5: "big5",
    ]
    return names[encoding].map { $0 as NSString }
}
