import Synchronization

/// When a caller's thread may wait for a read's answer itself (`Connection+InlineWait.swift`),
/// as far as the other reads of its event loop decide it. One per loop (`EventLoop.local`),
/// confined to the loop like the connections that report to it.
///
/// Invariants:
/// - `waitingReads` is the number of reads waiting for bytes on the loop's connections: each
///   connection reports `readBegan()` when its pending read appears and `readEnded()` when it is
///   answered or abandoned, exactly once each, so it never goes below zero.
/// - `aloneReads` counts the reads in a row, up to `aloneReadsRequired`, that began while no
///   other read waited; any read that begins beside another resets it to zero. A new loop counts
///   as having seen no overlap.
/// - `connectionsInUse` counts the loop's connections a pool has lent out for an exchange
///   (``Connection/useBegan()`` to ``Connection/useEnded()``, once each per lease). It is atomic:
///   pools lend and take back from any thread.
/// - A wait on a caller's thread is allowed only for a read that is the only one waiting, after
///   `aloneReadsRequired` reads in a row began alone, and while at most one of the loop's
///   connections is in use. Concurrent tasks start reads while others wait, often enough that
///   the first rule stays false for them: one waiting in ppoll(2) would hold a concurrency thread
///   the others need (on one processor, 64 tasks ran 2.4 times slower when each read that
///   happened to start alone was waited for this way). The second rule covers what the reads
///   cannot show: with one concurrency thread (a process confined to one processor), the other
///   tasks wait for the thread before they can start a read at all, so every read starts alone;
///   waiting in ppoll(2) then ran 64 tasks one after another (20,000 requests, 20,000 ppoll
///   calls and 82 epoll_wait calls, with the processor idle a third of the time).
/// - A task whose read was answered on its thread did not suspend, so the tasks waiting for that
///   thread (which no count shows) did not run meanwhile. After every `waitsBetweenYields`
///   waits of the loop, the waiting task yields before it goes on: a task holds a thread for at
///   most that many waits before the others get a turn.
/// The time bound of each wait (`inlineWaitLimit`) and its back-off after run-outs are the
/// connection's (the peer's speed is a property of the connection, not of the loop).
final class InlineWaitPolicy: @unchecked Sendable {
    // @unchecked: touched only on the loop it belongs to (the callers assert `inEventLoop`).

    /// Reads in a row that must begin alone before callers' threads wait for answers.
    static let aloneReadsRequired = 8
    /// Waits on callers' threads after which the caller yields its thread (see `waitBegan()`).
    static let waitsBetweenYields = 8

    private var waitingReads = 0
    private var aloneReads = InlineWaitPolicy.aloneReadsRequired
    private var waitsSinceYield = 0
    /// Connections of this loop lent out for an exchange, by every pool: the loop's own count of
    /// its users at work (``EventLoop/usersAtWork``), one count for both uses.
    let connectionsInUse: SharedCount

    init(connectionsInUse: SharedCount = SharedCount()) { self.connectionsInUse = connectionsInUse }

    /// A read began waiting for bytes on one of the loop's connections.
    func readBegan() {
        waitingReads += 1
        aloneReads = waitingReads > 1 ? 0 : min(aloneReads + 1, Self.aloneReadsRequired)
    }

    /// A read that waited on one of the loop's connections was answered or abandoned.
    func readEnded() {
        assert(waitingReads > 0, "readEnded without readBegan")
        waitingReads -= 1
    }

    /// A caller's thread is about to wait for a read. True every `waitsBetweenYields`-th time:
    /// the caller then yields its thread once the read is answered.
    func waitBegan() -> Bool {
        waitsSinceYield += 1
        guard waitsSinceYield >= Self.waitsBetweenYields else { return false }
        waitsSinceYield = 0
        return true
    }

    /// Whether the read that just began may be waited for on its caller's thread.
    var allowsInlineWait: Bool {
        waitingReads == 1 && aloneReads >= Self.aloneReadsRequired && connectionsInUse.value <= 1
    }
}
