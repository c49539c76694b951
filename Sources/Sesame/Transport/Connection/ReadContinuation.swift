import Synchronization

/// A waiting read's caller: resumed once, on the loop, with the bytes read or the failure.
///
/// The answer is published through the connection's ``ReadHandoff`` before the task resumes, and
/// taken from it once the task has. The continuation alone orders the two threads too, but when
/// the answer comes before the task suspended (an inline wait whose bytes the loop served, a quick
/// answer) the order lives only in the concurrency runtime's atomics, which ThreadSanitizer does
/// not see: it reported the bytes the loop thread decrypted, read by the task, as a race. The
/// release/acquire pair costs one atomic add per read and no allocation.
struct ReadContinuation: Sendable {
    #if DEBUG
    // Checked in debug builds (the tests catch a read answered twice or never), unchecked in
    // release builds (no allocation per read; every answer goes through `clearPendingRead`, so a
    // read is answered once).
    fileprivate typealias Base = CheckedContinuation<[UInt8], any Error>
    #else
    fileprivate typealias Base = UnsafeContinuation<[UInt8], any Error>
    #endif

    fileprivate let base: Base
    fileprivate let handoff: ReadHandoff

    func resume(returning bytes: [UInt8]) {
        handoff.publish()
        base.resume(returning: bytes)
    }

    func resume(throwing error: any Error) {
        handoff.publish()
        base.resume(throwing: error)
    }
}

/// Orders a read's answer, written on the loop, before the reading task's use of it (see
/// ``ReadContinuation``). One per connection; reads of any number of tasks may share it.
final class ReadHandoff: Sendable {
    private let answers = Atomic<Int>(0)

    fileprivate func publish() {
        answers.add(1, ordering: .releasing)
    }

    fileprivate func take() {
        _ = answers.load(ordering: .acquiring)
    }
}

/// Suspends until `body`'s continuation is resumed, then takes the answer through `handoff`.
func withReadContinuation(
    handoff: ReadHandoff,
    _ body: (ReadContinuation) -> Void
) async throws -> [UInt8] {
    defer { handoff.take() }
    #if DEBUG
    return try await withCheckedThrowingContinuation { body(ReadContinuation(base: $0, handoff: handoff)) }
    #else
    return try await withUnsafeThrowingContinuation { body(ReadContinuation(base: $0, handoff: handoff)) }
    #endif
}
