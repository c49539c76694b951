import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// A small body that inflates to a huge one streams out in bounded pieces: what is held at once
/// does not grow with the ratio.
@Suite struct DecompressionBombTests {
    /// `size` zero bytes, gzipped by Python's zlib (another implementation than the one decoding).
    static func bomb(decodedSize: Int) throws -> [UInt8] {
        let directory = try temporaryDirectory()
        let output = directory.appendingPathComponent("bomb.gz").path
        try shell(
            "python3 -c 'import gzip; f=gzip.open(\"\(output)\",\"wb\",9); [f.write(bytes(1<<20)) for _ in range(\(decodedSize >> 20))]; f.close()'"
        )
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: output)))
    }

    static let decodedSize = 64 << 20

    @Test func oneReadOfABombComesOutInPiecesOfAtMost64KiB() throws {
        let bomb = try Self.bomb(decodedSize: Self.decodedSize)
        #expect(bomb.count < 100_000)
        let inflater = try Inflater(coding: .gzip, limit: 1 << 40)
        var total = 0
        var largest = 0
        for start in stride(from: 0, to: bomb.count, by: 65_536) {
            inflater.feed(Array(bomb[start..<min(bomb.count, start + 65_536)]))
            while let piece = try inflater.nextPiece() {
                total += piece.count
                largest = max(largest, piece.count)
            }
        }
        try inflater.finish()
        #expect(total == Self.decodedSize)
        #expect(largest <= 65_536)
    }

    final class Counter: SessionTaskDelegate, @unchecked Sendable {
        // @unchecked: the session calls a task's delegate one method at a time.
        var total = 0
        var largest = 0

        func session(_ session: Session, task: SessionTask, didReceive data: Data) async {
            total += data.count
            largest = max(largest, data.count)
        }
    }

    @Test func aSessionStreamsABombInBoundedPiecesAndTheLimitStopsIt() async throws {
        let bomb = try Self.bomb(decodedSize: Self.decodedSize)
        let origin = try server { _ in .bytes(bomb, headers: [("Content-Encoding", "gzip")]) }
        defer { origin.shutdown() }
        let counter = Counter()
        let session = testSession()
        let outcome: (any Error)? = await withCheckedContinuation { continuation in
            final class Done: SessionTaskDelegate, @unchecked Sendable {
                let counter: Counter
                let done: @Sendable ((any Error)?) -> Void
                init(_ counter: Counter, _ done: @escaping @Sendable ((any Error)?) -> Void) {
                    self.counter = counter
                    self.done = done
                }
                func session(_ session: Session, task: SessionTask, didReceive data: Data) async {
                    await counter.session(session, task: task, didReceive: data)
                }
                func session(_ session: Session, task: SessionTask, didCompleteWithError error: (any Error)?) async {
                    done(error)
                }
            }
            session.dataTask(
                with: HTTPRequest(url: url(origin, "/")),
                delegate: Done(counter) { continuation.resume(returning: $0) }
            )
            .resume()
        }
        #expect(outcome == nil)
        #expect(counter.total == Self.decodedSize)
        #expect(counter.largest <= 65_536)
        // Where a body is collected in memory, maximumDecodedBodySize ends it.
        let limited = testSession { $0.maximumDecodedBodySize = 1 << 20 }
        let error = await #expect(throws: SesameError.self) { _ = try await limited.data(from: url(origin, "/")) }
        #expect(error?.code == .protocolError)
        #expect(error?.detail.contains("limit") == true)
    }
}
