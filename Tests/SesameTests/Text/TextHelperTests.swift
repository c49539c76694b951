import Foundation
import Testing

@testable import Sesame

/// The small text helpers that replace Foundation's `NSString` methods in the Sesame module,
/// checked against Foundation's own answers.
@Suite struct TextHelperTests {
    @Test func trimmingWhitespaceMatchesFoundationsWhitespaceSet() {
        for text in ["  a b \t", "\u{00A0}x\u{3000}", "\n x \n", "", "   ", "\t\t", "ab", " é "] {
            #expect(text.trimmingWhitespace() == text.trimmingCharacters(in: .whitespaces), "\(text.debugDescription)")
        }
        #expect("\"quoted\"".trimming(["\""]) == "quoted")
        #expect(" 'GB18030'\t".trimming([" ", "\t", "\"", "'"]) == "GB18030")
    }

    @Test func percentDecodingMatchesFoundation() {
        for text in ["a%20b", "%E4%B8%AD", "plain", "%", "%2", "%zz", "%FF", "100%25", "%41%42c", ""] {
            #expect(text.percentDecoded() == text.removingPercentEncoding, "\(text)")
        }
    }

    @Test func pathTextMatchesNSString() {
        for path in [
            "/a/b.txt", "/a/b/", "/", "b.txt", "a/b", "/a", ".netrc", "/x/.cookies.shared", "a.tar.gz", "/a//b", "",
        ] {
            let ns = path as NSString
            #expect(PathText.lastComponent(path) == ns.lastPathComponent, "last \(path)")
            #expect(PathText.deletingLastComponent(path) == ns.deletingLastPathComponent, "parent \(path)")
            #expect(PathText.pathExtension(path) == ns.pathExtension, "extension \(path)")
        }
    }

    @Test func upperCaseHexAndPercentEscapes() {
        #expect(HexDigits.upper(UInt8(0x0A)) == "0A")
        #expect(HexDigits.upper(UInt32(0xDEAD_BEEF)) == "DEADBEEF")
        #expect(HexDigits.upper(UInt32(7)) == "00000007")
        #expect(HexDigits.percentEscape(0x22) == "%22")
        #expect((0...255).allSatisfy { HexDigits.percentEscape(UInt8($0)) == String(format: "%%%02X", $0) })
    }
}
