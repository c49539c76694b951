import Foundation
import SesameTesting
import Testing

@testable import Sesame

/// Trailer fields after a chunked HTTP/1.1 body: kept apart from the header fields, and on the
/// response once the body has ended.
@Suite struct TrailerTests {
    @Test func trailersReachTheTaskOnceItsBodyEnded() async throws {
        let origin = try server { _ in
            .chunked(
                [Array("one ".utf8), Array("two".utf8)],
                headers: [("Trailer", "X-Digest, X-Count")],
                trailers: [("X-Digest", "sha-256=abc"), ("X-Count", "2")]
            )
        }
        defer { origin.shutdown() }
        let recorder = TrailerRecorder()
        let task = testSession().dataTask(with: HTTPRequest(url: url(origin, "/")), delegate: recorder)
        task.resume()
        let finished = await recorder.finished()
        #expect(finished.headTrailers?.isEmpty == true, "the head handed to the delegate comes before them")
        #expect(finished.completeTrailers?["x-digest"] == "sha-256=abc")
        #expect(finished.completeTrailers?["x-count"] == "2")
        #expect(finished.body == "one two")
    }
}

/// Records the trailers a data task's response has at its head and after its completion.
private final class TrailerRecorder: SessionTaskDelegate, @unchecked Sendable {
    // @unchecked: `state` is only touched under `lock`.
    struct Finished: Sendable {
        var headTrailers: HTTPHeaders?
        var completeTrailers: HTTPHeaders?
        var body = ""
    }
    private let lock = NSLock()
    private var state = Finished()
    private var waiter: CheckedContinuation<Finished, Never>?
    private var done = false

    func session(_ session: Session, task: SessionTask, didReceive response: HTTPResponse) async -> ResponseDisposition
    {
        lock.withLock { state.headTrailers = response.trailers }
        return .allow
    }

    func session(_ session: Session, task: SessionTask, didReceive data: Data) async {
        lock.withLock { state.body += String(decoding: data, as: UTF8.self) }
    }

    func session(_ session: Session, task: SessionTask, didCompleteWithError error: (any Error)?) async {
        let waiter = lock.withLock { () -> CheckedContinuation<Finished, Never>? in
            state.completeTrailers = task.response?.trailers
            done = true
            defer { self.waiter = nil }
            return self.waiter
        }
        waiter?.resume(returning: lock.withLock { state })
    }

    func finished() async -> Finished {
        await withCheckedContinuation { continuation in
            let ready = lock.withLock { () -> Finished? in
                if done { return state }
                waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
