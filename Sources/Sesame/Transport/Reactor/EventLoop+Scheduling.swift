internal import CSesameShims
import Glibc
import Synchronization

/// A count kept by several parties, on any thread: the loop's users at work
/// (``EventLoop/usersAtWork``), which the connection layer keeps and reads as its connections in
/// use (`InlineWaitPolicy`).
final class SharedCount: Sendable {
    private let count = Atomic<Int>(0)

    func add(_ delta: Int) { count.wrappingAdd(delta, ordering: .relaxed) }
    func subtract(_ delta: Int) { count.wrappingSubtract(delta, ordering: .relaxed) }
    func set(_ newValue: Int) { count.store(newValue, ordering: .relaxed) }
    var value: Int { count.load(ordering: .relaxed) }
}

extension EventLoop {
    /// How the loop thread is scheduled against the thread running on its processor when an
    /// event wakes it.
    public enum SchedulingPolicy: Sendable {
        /// The default: while several of its users are at work (connections lent out for
        /// exchanges), the loop waits for events as a `SCHED_BATCH` thread (sched(7)), so that
        /// its wake-ups do not preempt the thread running on its processor; it runs when that
        /// thread blocks or its time slice ends, and on an idle processor at once.
        ///
        /// The tasks the loop serves run on Swift's concurrency threads. Where they share a
        /// processor with the loop (a process confined to one, a busy machine), a loop that
        /// preempts them on every answer that arrives serves one answer per wake-up and hands
        /// each back: 64 concurrent tasks on one processor made 1.65 context switches per request.
        /// Left to run when the processor is free, the loop serves together the answers that came
        /// meanwhile. The cost: while other programs keep the processor busy, an answer may wait
        /// up to a time slice (a few milliseconds) before the loop reads it.
        ///
        /// Only the wait is a batch thread's: the loop's work runs under the usual policy, so the
        /// threads it starts (libdispatch starts concurrency threads from the thread that gives
        /// them work, and a new thread takes its creator's policy) keep the usual policy too.
        case batch
        /// `SCHED_OTHER`, the policy threads start with: each of the loop's wake-ups may preempt
        /// the running thread. The loop reads answers sooner while other programs keep its
        /// processor busy, at the cost above for the tasks it serves.
        case normal
    }

    /// Whether the coming wait (of at most `timeout` ms, -1 for no bound) is a batch thread's: by
    /// the policy, when the wait may block and more than one of the loop's users is at work
    /// (``usersAtWork``, connections lent out for an exchange), so that answers for several can
    /// arrive while the tasks they resume run. With one, the loop wakes once per request anyway,
    /// and the two system calls of a batch wait would only add to it (6 µs per request, one
    /// request at a time over HTTP/2).
    func waitsAsBatch(timeout: Int32) -> Bool {
        schedulingPolicy == .batch && timeout != 0 && usersAtWork.value > 1
    }

    /// Waits in epoll_wait(2) for at most `timeout` milliseconds (-1: until an event), as a
    /// `SCHED_BATCH` thread when `asBatch`. Where the system refuses the policy (a sandbox
    /// forbidding `sched_setscheduler(2)`), the thread keeps the one it had, and is not asked
    /// again. `errno` is that of epoll_wait.
    func waitForEvents(_ events: inout [UInt32], _ datas: inout [UInt64], timeout: Int32, asBatch: Bool) -> Int32 {
        if asBatch { _ = CSesameShims_set_thread_batch_scheduling(1) }
        let result = CSesameShims_epoll_wait(epollFD, &events, &datas, 64, timeout)
        guard asBatch else { return result }
        let waitError = errno
        _ = CSesameShims_set_thread_batch_scheduling(0)
        errno = waitError
        return result
    }

    /// Whether the loop thread runs under `SCHED_BATCH` now (for tests); nil before it started,
    /// or when the system does not tell.
    var runsAsBatch: Bool? {
        let thread = kernelThreadID.load(ordering: .acquiring)
        return thread == 0 ? nil : Self.runsAsBatch(thread)
    }

    /// Whether the calling thread runs under `SCHED_BATCH` (for tests); nil when the system does
    /// not tell.
    static var callingThreadRunsAsBatch: Bool? { runsAsBatch(CSesameShims_thread_id()) }

    private static func runsAsBatch(_ thread: Int32) -> Bool? {
        switch CSesameShims_thread_is_batch(thread) {
        case 1: return true
        case 0: return false
        default: return nil
        }
    }
}
