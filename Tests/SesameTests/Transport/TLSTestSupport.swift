import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// One PKI for the whole test process (key generation is the slow part).
let sharedPKI: TestPKI = {
    // safe: a test process without a PKI cannot test anything
    try! TestPKI()
}()

/// A configuration that trusts only the test PKI's root.
func trustingTestRoot(_ pki: TestPKI = sharedPKI) -> TLSConfiguration {
    var configuration = TLSConfiguration.makeClientConfiguration()
    configuration.trustRoots = .anchors([pki.root.certificate])
    return configuration
}

/// Writes a minimal HTTP/1.1 request and reads until the response body named by Content-Length arrived.
func exchange(_ connection: Connection, path: String = "/") async throws -> String {
    try await connection.write(Array("GET \(path) HTTP/1.1\r\nHost: \(connection.host)\r\n\r\n".utf8))
    var received: [UInt8] = []
    while true {
        let chunk = try await connection.read()
        if chunk.isEmpty { break }
        received += chunk
        let text = String(decoding: received, as: UTF8.self)
        if let headEnd = text.range(of: "\r\n\r\n") {
            let head = text[..<headEnd.lowerBound]
            let length =
                head.split(separator: "\r\n").compactMap { line -> Int? in
                    let parts = line.split(separator: ":", maxSplits: 1)
                    return parts.count == 2 && parts[0].lowercased() == "content-length"
                        ? Int(parts[1].trimmingCharacters(in: .whitespaces)) : nil
                }.first ?? 0
            if text.utf8.count - text.utf8.distance(from: text.startIndex, to: headEnd.upperBound) >= length {
                return String(text[headEnd.upperBound...])
            }
        }
    }
    return String(decoding: received, as: UTF8.self)
}
