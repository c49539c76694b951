import Foundation

// The CoreFoundation text-encoding names Apple code uses to reach encodings outside
// `String.Encoding`'s named ones (seed 003's GB18030), with Apple's values. Foundation's
// `data(using:)` and `NSString(data:encoding:)` honour the `String.Encoding` they convert to.

public typealias CFStringEncoding = UInt32

/// CoreFoundation's external encodings (`CFStringEncodings`), the ones apps name.
public enum CFStringEncodings: Int, Sendable {
    case macChineseTrad = 0x0002
    case macJapanese = 0x0001
    case macKorean = 0x0003
    case macChineseSimp = 0x0019
    case dosChineseSimplif = 0x0421
    case dosChineseTrad = 0x0423
    case GB_2312_80 = 0x0630
    case GBK_95 = 0x0631
    case GB_18030_2000 = 0x0632
    case big5 = 0x0A03
    case big5_HKSCS_1999 = 0x0A06
    case EUC_CN = 0x0930
    case EUC_TW = 0x0931
    case EUC_KR = 0x0940
    case shiftJIS = 0x0A01
    case KOI8_R = 0x0A02
    case windowsLatin2 = 0x0501
    case windowsCyrillic = 0x0502
    case windowsArabic = 0x0506
    case isoLatin2 = 0x0202
    case isoLatin5 = 0x0209
    case isoLatin9 = 0x020F
}

public let kCFStringEncodingGB_18030_2000 = CFStringEncoding(CFStringEncodings.GB_18030_2000.rawValue)
public let kCFStringEncodingGBK_95 = CFStringEncoding(CFStringEncodings.GBK_95.rawValue)
public let kCFStringEncodingBig5 = CFStringEncoding(CFStringEncodings.big5.rawValue)
public let kCFStringEncodingUTF8: CFStringEncoding = 0x0800_0100
public let kCFStringEncodingISOLatin1: CFStringEncoding = 0x0201
public let kCFStringEncodingWindowsLatin1: CFStringEncoding = 0x0500
public let kCFStringEncodingASCII: CFStringEncoding = 0x0600
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
