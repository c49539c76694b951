import Foundation
import Testing

@testable import Sesame

@Suite struct InflaterTests {
    /// Compresses with the system's gzip / python zlib so the test data comes from another implementation.
    func compressed(_ text: String, with command: String) throws -> [UInt8] {
        let directory = try temporaryDirectory()
        let input = directory.appendingPathComponent("input").path
        try Data(text.utf8).write(to: URL(fileURLWithPath: input))
        let output = directory.appendingPathComponent("output").path
        try shell(command.replacingOccurrences(of: "IN", with: input).replacingOccurrences(of: "OUT", with: output))
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    static let text = String(repeating: "Sesame streams gzip and deflate bodies. ", count: 5_000)

    func decode(_ bytes: [UInt8], _ coding: Inflater.Coding, pieces: Int, limit: Int = 1 << 30) throws -> String {
        let inflater = try Inflater(coding: coding, limit: limit)
        var output: [UInt8] = []
        let size = max(1, bytes.count / pieces)
        var index = 0
        while index < bytes.count {
            output += try inflater.inflate(Array(bytes[index..<min(bytes.count, index + size)]))
            index += size
        }
        try inflater.finish()
        return String(decoding: output, as: UTF8.self)
    }

    @Test(arguments: [1, 7, 1000])
    func gzipFromTheGzipToolDecodesInAnyPieces(pieces: Int) throws {
        let bytes = try compressed(Self.text, with: "gzip -c IN > OUT")
        #expect(try decode(bytes, .gzip, pieces: pieces) == Self.text)
    }

    @Test func zlibWrappedAndRawDeflateBothDecode() throws {
        let wrapped = try compressed(
            Self.text,
            with: "python3 -c 'import sys,zlib; open(\"OUT\",\"wb\").write(zlib.compress(open(\"IN\",\"rb\").read()))'"
        )
        #expect(try decode(wrapped, .deflate, pieces: 3) == Self.text)
        let raw = try compressed(
            Self.text,
            with:
                "python3 -c 'import zlib; c=zlib.compressobj(9, zlib.DEFLATED, -15); d=open(\"IN\",\"rb\").read(); open(\"OUT\",\"wb\").write(c.compress(d)+c.flush())'"
        )
        #expect(try decode(raw, .deflate, pieces: 3) == Self.text)
    }

    @Test func concatenatedGzipMembersDecode() throws {
        let one = try compressed("first;", with: "gzip -c IN > OUT")
        let two = try compressed("second", with: "gzip -c IN > OUT")
        #expect(try decode(one + two, .gzip, pieces: 2) == "first;second")
    }

    @Test func theDecodedSizeIsBounded() throws {
        let bomb = try compressed(String(repeating: "0", count: 10_000_000), with: "gzip -c IN > OUT")
        #expect(bomb.count < 20_000)
        let error = #expect(throws: SesameError.self) { _ = try decode(bomb, .gzip, pieces: 1, limit: 1_000_000) }
        #expect(error?.detail.contains("1000000-byte limit") == true)
    }

    @Test func corruptAndTruncatedBodiesAreErrors() throws {
        let bytes = try compressed(Self.text, with: "gzip -c IN > OUT")
        var corrupt = bytes
        for index in 20..<60 { corrupt[index] ^= 0x5A }
        let corruptError = #expect(throws: SesameError.self) { _ = try decode(corrupt, .gzip, pieces: 1) }
        #expect(corruptError?.code == .protocolError)
        let truncated = Array(bytes.prefix(bytes.count / 2))
        let truncatedError = #expect(throws: SesameError.self) { _ = try decode(truncated, .gzip, pieces: 1) }
        #expect(truncatedError?.detail.contains("ended before") == true)
    }
}
