/// The two limits on each wait for a response's next bytes, over either protocol: the request
/// timeout (the longest the server may stay silent) and the task's deadline. Each wait gets
/// whichever ends first, and a timeout the deadline caused says so.
struct ReadLimits {
    let timeout: Duration
    let deadline: ContinuousClock.Instant
    /// The clock the deadline was taken on (the connection's loop's).
    let clock: LoopClock

    /// Runs `wait` with the time it may take.
    /// - Throws: ``SesameError/Code/timeout`` naming the resource timeout once the deadline passed.
    func wait<Value>(_ wait: (Duration) async throws -> Value) async throws -> Value {
        let remaining = clock.now.duration(to: deadline)
        guard remaining > .zero else { throw Self.resourceTimeout }
        do {
            return try await wait(min(timeout, remaining))
        } catch let error as SesameError where error.code == .timeout && remaining < timeout {
            throw Self.resourceTimeout
        }
    }

    private static var resourceTimeout: SesameError {
        SesameError(.timeout, "the task did not finish within the resource timeout")
    }
}
