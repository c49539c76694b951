import Foundation
import Testing

@testable import Sesame

@Suite struct TextEncodingTests {
    @Test func gb18030RoundTripsEverythingUnicodeHas() throws {
        let text = "中文 € 😀 ̈a ßé"
        let bytes = try TextEncoding.gb18030.encode(text)
        #expect(Array(bytes.prefix(4)) == [0xD6, 0xD0, 0xCE, 0xC4])
        #expect(try TextEncoding.gb18030.decode(bytes) == text)
    }

    @Test func eachNamedEncodingWritesWhatItShould() throws {
        #expect(try TextEncoding.gbk.encode("中文") == [0xD6, 0xD0, 0xCE, 0xC4])
        #expect(try TextEncoding.big5.encode("中文") == [0xA4, 0xA4, 0xA4, 0xE5])
        #expect(try TextEncoding.shiftJIS.encode("テスト") == [0x83, 0x65, 0x83, 0x58, 0x83, 0x67])
        #expect(try TextEncoding.eucJP.encode("テスト") == [0xA5, 0xC6, 0xA5, 0xB9, 0xA5, 0xC8])
        #expect(try TextEncoding.eucKR.encode("한국어") == [0xC7, 0xD1, 0xB1, 0xB9, 0xBE, 0xEE])
        #expect(try TextEncoding.isoLatin1.encode("café") == [0x63, 0x61, 0x66, 0xE9])
        #expect(try TextEncoding.windows1252.encode("€") == [0x80])
    }

    @Test func invalidBytesAreAnErrorWithTheirOffset() {
        let lone = #expect(throws: SesameError.self) { try TextEncoding.gb18030.decode([0x41, 0x80, 0x42]) }
        #expect(lone?.code == .textDecodingFailed)
        #expect(lone?.detail.contains("byte 1") == true, "\(String(describing: lone))")
        let cut = #expect(throws: SesameError.self) { try TextEncoding.gb18030.decode([0x41, 0xD6]) }
        #expect(cut?.detail.contains("middle of a character") == true, "\(String(describing: cut))")
        let utf8 = #expect(throws: SesameError.self) { try TextEncoding.utf8.decode([0x61, 0xFF]) }
        #expect(utf8?.detail.contains("byte 1") == true, "\(String(describing: utf8))")
    }

    @Test func charactersAnEncodingLacksAreNamed() {
        let error = #expect(throws: SesameError.self) { try TextEncoding.gbk.encode("ok 😀") }
        #expect(error?.code == .textEncodingFailed)
        #expect(error?.detail.contains("U+1F600") == true, "\(String(describing: error))")
        #expect(throws: SesameError.self) { try TextEncoding.isoLatin1.encode("中") }
    }

    @Test func namesAndFoundationEncodingsMap() throws {
        #expect(try TextEncoding(ianaName: "gb18030") == .gb18030)
        #expect(try TextEncoding(ianaName: "\"GB2312\"") == .gbk)
        #expect(try TextEncoding(ianaName: "Shift_JIS") == .shiftJIS)
        #expect(try TextEncoding(ianaName: "latin1") == .isoLatin1)
        #expect(try TextEncoding(ianaName: "KOI8-R").encode("привет").count == 6)
        #expect(throws: SesameError.self) { try TextEncoding(ianaName: "no-such-charset") }
        #expect(throws: SesameError.self) { try TextEncoding(ianaName: "UTF-8//TRANSLIT") }
        #expect(TextEncoding(String.Encoding.gb18030) == .gb18030)
        #expect(TextEncoding(String.Encoding.shiftJIS) == .shiftJIS)
        #expect(TextEncoding(String.Encoding.utf16) == nil)
    }
}
