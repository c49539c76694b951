/// Waits until `condition` holds, looking again every few milliseconds, for at most `limit`: for
/// state nothing tells a test about (a pool's count, a file a framework removes after its
/// callback), where a fixed sleep would be too long on a quiet machine or too short on a busy one.
///
/// ```swift
/// #expect(await eventually { server.connectionCount == 2 })
/// ```
/// - Returns: whether the condition held in time.
public func eventually(
    within limit: Duration = .seconds(10),
    _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while true {
        if try await condition() { return true }
        guard ContinuousClock.now < deadline else { return false }
        do {
            try await Task.sleep(for: .milliseconds(5))
        } catch {
            return false  // cancelled: no more looking
        }
    }
}
