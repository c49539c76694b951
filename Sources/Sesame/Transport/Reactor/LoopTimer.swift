/// A timer on an event loop that any thread may start and cancel: the loop's own timers are
/// loop-confined, so both steps are posted to the loop, in order.
///
/// For the rare paths that wait off the loop with a deadline (a name lookup, a task waiting for a
/// pooled connection). A cancelled timer leaves the loop's heap with its closure (`TimerHeap`),
/// unlike a cancelled `Task.sleep`, whose dispatch timer lives until its deadline.
final class LoopTimer: @unchecked Sendable {
    // @unchecked: `handle` and `cancelled` are read and written on the loop only.
    private let loop: EventLoop
    private var handle: TimerHandle?
    private var cancelled = false

    /// Runs `work` on `loop` at `deadline` unless ``cancel()`` comes first.
    init(on loop: EventLoop, at deadline: ContinuousClock.Instant, _ work: @escaping @Sendable () -> Void) {
        self.loop = loop
        _ = loop.execute { [self] in
            guard !cancelled else { return }
            handle = loop.scheduleTimer(at: deadline) { [self] in
                handle = nil
                work()
            }
        }
    }

    /// Stops the timer if it has not fired; harmless otherwise.
    func cancel() {
        _ = loop.execute { [self] in
            cancelled = true
            if let handle { loop.cancelTimer(handle) }
            handle = nil
        }
    }
}
