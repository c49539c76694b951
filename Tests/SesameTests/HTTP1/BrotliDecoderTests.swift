import Foundation
import Testing

@testable import Sesame

/// `Content-Encoding: br` (RFC 7932) through libbrotli: vectors made by another implementation
/// (Python's brotlicffi, and swift-corelibs-foundation's test server's "Hello World!").
@Suite struct BrotliDecoderTests {
    static let helloWorld: [UInt8] = [
        0x8B, 0x05, 0x80, 0x48, 0x65, 0x6C, 0x6C, 0x6F, 0x20, 0x57, 0x6F, 0x72, 0x6C, 0x64, 0x21, 0x03,
    ]
    /// "sesame " 20,000 times (140,000 bytes), compressed to 23.
    static let sesame: [UInt8] = [
        0x5B, 0xDF, 0x22, 0x82, 0xDF, 0x48, 0x99, 0x3A, 0xBE, 0xE5, 0x5C, 0x1B, 0x48, 0x85, 0x95, 0xC5, 0x6D, 0x91,
        0xC0, 0x49, 0x0D, 0x01, 0x79,
    ]
    static let sesameText = String(repeating: "sesame ", count: 20_000)

    func decode(_ bytes: [UInt8], pieces: Int, limit: Int = 1 << 30) throws -> (text: String, largestPiece: Int) {
        let decoder = try BrotliDecoder(limit: limit)
        var output: [UInt8] = []
        var largest = 0
        let size = max(1, bytes.count / pieces)
        var index = 0
        while index < bytes.count {
            decoder.feed(Array(bytes[index..<min(bytes.count, index + size)]))
            while let piece = try decoder.nextPiece() {
                largest = max(largest, piece.count)
                output += piece
            }
            index += size
        }
        try decoder.finish()
        return (String(decoding: output, as: UTF8.self), largest)
    }

    @Test(arguments: [1, 5, 23])
    func vectorsDecodeInAnyPiecesAndComeOutInBoundedPieces(pieces: Int) throws {
        #expect(try decode(Self.helloWorld, pieces: pieces).text == "Hello World!")
        let (text, largest) = try decode(Self.sesame, pieces: pieces)
        #expect(text == Self.sesameText)
        #expect(largest <= 65_536, "a small body expands in pieces, never all at once")
    }

    @Test func theDecodedSizeIsBounded() throws {
        #expect(throws: SesameError.self) { _ = try decode(Self.sesame, pieces: 1, limit: 100_000) }
    }

    @Test func truncatedCorruptAndTrailingBytesAreErrors() throws {
        #expect(throws: SesameError.self) { _ = try decode(Array(Self.sesame.dropLast(3)), pieces: 1) }
        #expect(throws: SesameError.self) { _ = try decode([0xFF, 0xFF, 0xFF, 0xFF], pieces: 1) }
        #expect(throws: SesameError.self) { _ = try decode(Self.helloWorld + [0x00], pieces: 1) }
    }

    @Test func brIsChosenFromContentEncodingAndAskedFor() throws {
        var headers = HTTPHeaders()
        headers.add(name: "Content-Encoding", value: "br")
        #expect(try BodyDecoding.decoder(for: headers, limit: 1 << 20, isHeadRequest: false) is BrotliDecoder)
        headers.add(name: "Content-Encoding", value: "gzip")
        #expect(try BodyDecoding.decoder(for: headers, limit: 1 << 20, isHeadRequest: false) == nil, "two codings stay")
        #expect(BodyDecoding.acceptEncoding.contains("br"))
    }
}
