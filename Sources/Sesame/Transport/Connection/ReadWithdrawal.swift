/// Ends one quiet read (``Connection/readShared(maxLength:waitingAtMost:sending:sent:withdrawal:)``)
/// from outside the task that waits for it: the task's cancellation, or an HTTP/2 stream that
/// failed while its own task was reading the connection for every stream. Withdrawing before the
/// read began ends it as soon as it begins; withdrawing after it ended does nothing to it.
final class ReadWithdrawal: Sendable {
    private let withdrawn = LockedValue(false)

    init() {}

    /// Whether ``withdraw(from:)`` was called.
    var isWithdrawn: Bool { withdrawn.withLock { $0 } }

    /// Ends the read's wait on `connection`'s loop; the connection goes on.
    func withdraw(from connection: Connection) {
        withdrawn.withLock { $0 = true }
        connection.loop.execute { connection.withdrawQuietRead() }
    }
}
