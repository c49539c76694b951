import Glibc

/// A mutex with a condition, for the test servers' own threads: what `NSLock` and `NSCondition`
/// gave SesameTesting before it stopped importing Foundation.
final class ThreadLock: @unchecked Sendable {
    // @unchecked: the pthread objects are only used through their own calls, which are thread-safe.
    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)

    init() {
        pthread_mutex_init(mutex, nil)
        var attributes = pthread_condattr_t()
        pthread_condattr_init(&attributes)
        // Deadlines are read from the monotonic clock, so that a change of the wall clock
        // neither ends a wait early nor stretches it.
        pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC)
        pthread_cond_init(condition, &attributes)
        pthread_condattr_destroy(&attributes)
    }

    deinit {
        pthread_cond_destroy(condition)
        pthread_mutex_destroy(mutex)
        condition.deallocate()
        mutex.deallocate()
    }

    func lock() { pthread_mutex_lock(mutex) }
    func unlock() { pthread_mutex_unlock(mutex) }

    func withLock<Result>(_ body: () throws -> Result) rethrows -> Result {
        lock()
        defer { unlock() }
        return try body()
    }

    /// Wakes every thread waiting in `wait(until:)`.
    func broadcast() { pthread_cond_broadcast(condition) }

    /// Waits, with the lock held by the caller, for a `broadcast()` or the deadline.
    /// - Returns: false once the deadline has passed.
    func wait(until deadline: ContinuousClock.Instant) -> Bool {
        let now = ContinuousClock.now
        guard now < deadline else { return false }
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        let remaining = (deadline - now).components
        let nanoseconds = Int(time.tv_nsec) + Int(remaining.attoseconds / 1_000_000_000)
        time.tv_sec += Int(remaining.seconds) + nanoseconds / 1_000_000_000
        time.tv_nsec = nanoseconds % 1_000_000_000
        return pthread_cond_timedwait(condition, mutex, &time) != ETIMEDOUT || ContinuousClock.now < deadline
    }
}
