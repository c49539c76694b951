import Foundation
import Testing

@testable import Sesame

@Suite struct ResponseSerializerTests {
    func response(_ status: Int = 200, type: String? = "application/json") -> HTTPResponse {
        var headers = HTTPHeaders()
        if let type { headers.add(name: "Content-Type", value: type) }
        let url = URL(string: "https://x.test/")!  // safe: literal
        return HTTPResponse(status: status, reason: "R", headers: headers, url: url)
    }

    struct User: Decodable, Sendable, Equatable {
        struct Address: Decodable, Sendable, Equatable { let city: String }
        let id: Int
        let name: String
        let addresses: [Address]
    }

    @Test func statusAndContentTypeAreValidatedWithTheResponseAndBodyInTheError() {
        let body = Data("{\"error\":\"nope\"}".utf8)
        let error = #expect(throws: ResponseSerializationError.self) {
            try JSONResponseSerializer().serialize(response(500), data: body)
        }
        #expect(error?.code == .responseValidationFailed)
        #expect(error?.response.status == 500)
        #expect(error?.body == body)
        let type = #expect(throws: ResponseSerializationError.self) {
            try JSONResponseSerializer().serialize(response(type: "text/html"), data: body)
        }
        #expect(type?.reason.contains("text/html") == true)
    }

    @Test func jsonKeepsBooleansApartFromNumbersAndReadsOtherCharsets() throws {
        let value = try JSONResponseSerializer().serialize(
            response(),
            data: Data(#"{"ok":true,"n":1,"x":1.5,"s":"é","nil":null,"list":[1,"a"]}"#.utf8)
        )
        #expect(value["ok"] == .bool(true))
        #expect(value["n"] == .integer(1))
        #expect(value["x"] == .number(1.5))
        #expect(value["s"]?.stringValue == "é")
        #expect(value["nil"] == .null)
        #expect(value["list"]?[1] == .string("a"))
        let gb = Data(try TextEncoding.gb18030.encode(#"{"城市":"北京"}"#))
        let decoded = try JSONResponseSerializer().serialize(
            response(type: "application/json; charset=GB18030"),
            data: gb
        )
        #expect(decoded["城市"]?.stringValue == "北京")
        var removing = JSONResponseSerializer()
        removing.removesKeysWithNullValues = true
        #expect(
            try removing.serialize(response(), data: Data(#"{"a":null,"b":[{"c":null}]}"#.utf8))
                == .object(["b": .array([.object([:])])])
        )
        #expect(try JSONResponseSerializer().serialize(response(204, type: nil), data: Data()) == .null)
    }

    @Test func decodableErrorsNameThePath() throws {
        let good = Data(#"{"id":1,"name":"Ada","addresses":[{"city":"London"}]}"#.utf8)
        #expect(
            try DecodableResponseSerializer(User.self).serialize(response(), data: good).addresses.first?.city
                == "London"
        )
        let bad = Data(#"{"id":1,"name":"Ada","addresses":[{"city":7}]}"#.utf8)
        let error = #expect(throws: ResponseSerializationError.self) {
            try DecodableResponseSerializer(User.self).serialize(response(), data: bad)
        }
        #expect(error?.code == .responseDecodingFailed)
        #expect(error?.reason.contains("addresses[0].city") == true, "\(String(describing: error))")
        let missing = #expect(throws: ResponseSerializationError.self) {
            try DecodableResponseSerializer(User.self).serialize(
                response(),
                data: Data(#"{"id":1,"addresses":[]}"#.utf8)
            )
        }
        #expect(missing?.reason.contains("name") == true, "\(String(describing: missing))")
    }

    @Test func stringsUseTheCharsetOrTheCallersEncodingAndRefuseGarbage() throws {
        let gb = Data(try TextEncoding.gb18030.encode("中文"))
        #expect(
            try StringResponseSerializer().serialize(response(type: "text/plain; charset=gb18030"), data: gb) == "中文"
        )
        #expect(
            try StringResponseSerializer(overridingEncoding: .gb18030).serialize(response(type: "text/plain"), data: gb)
                == "中文"
        )
        let error = #expect(throws: ResponseSerializationError.self) {
            try StringResponseSerializer().serialize(response(type: "text/plain"), data: gb)  // not UTF-8
        }
        #expect(error?.code == .textDecodingFailed)
        let unknown = #expect(throws: ResponseSerializationError.self) {
            try StringResponseSerializer().serialize(response(type: "text/plain; charset=klingon"), data: gb)
        }
        #expect(unknown?.reason.contains("klingon") == true)
    }

    @Test func theCompoundSerializerTriesJSONThenText() throws {
        let serializer = CompoundResponseSerializer()
        #expect(try serializer.serialize(response(), data: Data("[1]".utf8)) == .json(.array([.integer(1)])))
        #expect(try serializer.serialize(response(type: "text/plain"), data: Data("hi".utf8)) == .string("hi"))
        #expect(throws: ResponseSerializationError.self) {
            try serializer.serialize(response(type: "application/octet-stream"), data: Data([0xFF]))
        }
        #expect(
            try CompoundResponseSerializer(fallsBackToData: true).serialize(
                response(type: "image/png"),
                data: Data([0xFF])
            ) == .data(Data([0xFF]))
        )
    }
}
