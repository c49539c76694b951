import FoundationEssentials
import Glibc

/// A value behind a `pthread_mutex_t` (`package`: shared with SesameTesting, not with users).
///
/// Used instead of `Synchronization.Mutex`, whose Linux implementation parks on raw futexes that
/// ThreadSanitizer cannot see, so every contended use is reported as a race; pthread mutexes are
/// understood by the sanitizer, and Sesame's TSan runs must be clean to mean anything.
package final class LockedValue<Value>: @unchecked Sendable {
    // @unchecked: `value` is only touched while `mutex` is held.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var value: Value

    package init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value.
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }

    /// Runs `body` with exclusive access to the value when no other thread holds it; nil otherwise.
    package func withLockIfAvailable<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result? {
        guard pthread_mutex_trylock(mutex) == 0 else { return nil }
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
