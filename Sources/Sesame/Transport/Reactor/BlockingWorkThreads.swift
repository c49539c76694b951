import FoundationEssentials
import Glibc

/// Threads of Sesame's own for calls that block (`getaddrinfo`), so that they run neither on an
/// event loop nor on the threads Swift concurrency runs tasks on.
///
/// Not a dispatch queue: on Linux a concurrent dispatch queue runs its work on dispatch's default
/// root queue, whose threads (one per processor) are the ones the Swift concurrency pool uses.
/// A lookup queued there waits behind every runnable task (a loaded test run saw 26 seconds pass
/// before "localhost" was looked up), and a lookup that blocks on a slow name server holds one
/// of those few threads meanwhile.
///
/// Invariants:
/// - at most `limit` threads are ever started, each only when work arrives and no started thread
///   is waiting for work; started threads wait for more work for as long as the process runs;
/// - work runs in the order it was submitted, each item on one thread, outside the lock.
final class BlockingWorkThreads: @unchecked Sendable {
    // @unchecked: `work`, `waiting` and `started` are only touched while `mutex` is held.
    typealias Work = @Sendable () -> Void

    /// Shared by every lookup of the process; four lookups in parallel, as many as browsers and
    /// curl's threaded resolver keep in flight for one host.
    static let shared = BlockingWorkThreads(limit: 4)

    private let limit: Int
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private let condition: UnsafeMutablePointer<pthread_cond_t>
    private var work: [Work] = []
    private var waiting = 0
    private var started = 0

    init(limit: Int) {
        precondition(limit > 0, "a pool of blocking threads needs at least one thread")
        self.limit = limit
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
        condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
        condition.initialize(to: pthread_cond_t())
        pthread_cond_init(condition, nil)
    }

    deinit {
        // Reached only by a pool that never started a thread (a started thread holds the pool).
        pthread_cond_destroy(condition)
        condition.deallocate()
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` on one of the pool's threads, as soon as one is free.
    ///
    /// When no thread can be created (the process is at its thread limit) and none was started
    /// before, `body` runs on the caller's thread rather than never.
    func submit(_ body: @escaping Work) {
        pthread_mutex_lock(mutex)
        work.append(body)
        var startAnother = false
        if work.count <= waiting {
            pthread_cond_signal(condition)
        } else if started < limit {
            started += 1
            startAnother = true
        }
        pthread_mutex_unlock(mutex)
        guard startAnother, !startThread() else { return }
        pthread_mutex_lock(mutex)
        started -= 1
        let orphaned = started == 0 ? work : []
        if started == 0 { work.removeAll() }
        pthread_mutex_unlock(mutex)
        for item in orphaned { item() }
    }

    /// Runs `body` on one of the pool's threads and returns what it returned or threw; the
    /// calling task is suspended meanwhile and holds no thread.
    func run<Value: Sendable>(_ body: @escaping @Sendable () throws -> Value) async throws -> Value {
        try await withCheckedThrowingContinuation { continuation in
            submit { continuation.resume(with: Result { try body() }) }
        }
    }

    /// How many threads were started, how many of them wait for work now, and how much work
    /// waits for a thread.
    var threadCounts: (started: Int, waiting: Int, queued: Int) {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return (started, waiting, work.count)
    }

    /// Starts one thread running ``serve()`` (it holds the pool); false when the system refused.
    private func startThread() -> Bool {
        DetachedThread.start { [self] in serve() }
    }

    /// A started thread's life: take the oldest work, run it, wait when there is none.
    private func serve() {
        pthread_mutex_lock(mutex)
        while true {
            while work.isEmpty {
                waiting += 1
                pthread_cond_wait(condition, mutex)
                waiting -= 1
            }
            let next = work.removeFirst()
            pthread_mutex_unlock(mutex)
            next()
            pthread_mutex_lock(mutex)
        }
    }
}
