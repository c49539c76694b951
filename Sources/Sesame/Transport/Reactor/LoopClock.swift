import Synchronization

/// The time an ``EventLoop`` keeps: when its timers fire, and what the connections on it take
/// for "now" (connect, handshake and read deadlines).
///
/// ``system`` follows `ContinuousClock`. A clock made by ``manual()`` stands still until
/// ``advance(by:)`` moves it: a test then makes a deadline pass at once, and sees what Sesame
/// does, without waiting for it.
///
/// ```swift
/// let clock = LoopClock.manual()
/// let loop = try EventLoop(name: "test", clock: clock)
/// // ... a connection on `loop` waits for a read with a 5-second timeout, then:
/// clock.advance(by: .seconds(6))  // the read fails with SesameError.Code.timeout
/// ```
public final class LoopClock: Sendable {
    /// The manual clock's instant (unused by the system clock).
    private let manualNow: LockedValue<ContinuousClock.Instant>
    /// True for a clock made by ``manual()``.
    public let isManual: Bool
    /// The loops whose timers follow this clock, told when it moves.
    private let loops = LockedValue<[WeakLoop]>([])

    private struct WeakLoop {
        weak var loop: EventLoop?
    }

    private init(manualNow: ContinuousClock.Instant?) {
        self.manualNow = LockedValue(manualNow ?? ContinuousClock.now)
        isManual = manualNow != nil
    }

    /// The process's monotonic clock.
    public static let system = LoopClock(manualNow: nil)

    /// A clock that starts at the current instant and moves only through ``advance(by:)``.
    public static func manual() -> LoopClock { LoopClock(manualNow: ContinuousClock.now) }

    /// The current instant.
    public var now: ContinuousClock.Instant {
        guard isManual else { return ContinuousClock.now }
        return manualNow.withLock { $0 }
    }

    /// Moves a manual clock forward by `duration`; the timers that came due fire on their loops.
    /// - Precondition: the clock was made by ``manual()`` and `duration` is not negative.
    public func advance(by duration: Duration) {
        precondition(isManual, "only a manual LoopClock can be advanced")
        precondition(duration >= .zero, "a clock does not go back")
        manualNow.withLock { $0 += duration }
        let attached = loops.withLock { loops in
            loops.removeAll { $0.loop == nil }
            return loops.compactMap(\.loop)
        }
        for loop in attached { loop.clockMoved() }
    }

    /// `loop` keeps this clock's time: it is told when a manual clock moves.
    func attach(_ loop: EventLoop) {
        guard isManual else { return }
        loops.withLock { $0.append(WeakLoop(loop: loop)) }
    }

    /// How long `epoll_wait` may sleep before the timer at `deadline` is due: -1 (until an
    /// event) when there is none, or when only a manual clock's move can make it due.
    func millisecondsUntil(_ deadline: ContinuousClock.Instant?) -> Int32 {
        guard let deadline else { return -1 }
        let now = self.now
        if deadline <= now { return 0 }
        if isManual { return -1 }
        let (seconds, attoseconds) = now.duration(to: deadline).components
        let milliseconds = seconds * 1000 + (attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
        return Int32(clamping: milliseconds)
    }
}
