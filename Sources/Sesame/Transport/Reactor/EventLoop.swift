internal import CSesameShims
import FoundationEssentials
import Glibc
import Synchronization

/// An epoll reactor on its own thread.
///
/// Work posted with ``execute(_:)`` from any thread runs on the loop thread in order. File
/// descriptors, their handlers and timers are loop-confined: register, change and cancel them only
/// on the loop (``inEventLoop``). The loop does not run on the Swift concurrency pool, so it may
/// block in `epoll_wait` without starving tasks; handlers must never block.
///
/// "On the loop" means holding the loop's ownership: the loop thread holds it between its waits,
/// and `runOnLoop(_:)` lets a caller's thread take it while the loop sleeps, so that a request
/// is written without waking the loop thread (which then wakes only for the answer).
public final class EventLoop: @unchecked Sendable {
    // @unchecked: `jobs` and `state` are guarded by their Mutexes; everything in `confined` is
    // touched only by the thread holding `ownership` (asserted through `inEventLoop`); `thread` is
    // written once in init and read by `shutdown` on another thread after init returned.
    let epollFD: Int32
    private let wakeFD: Int32
    private let queue = LockedValue(Queue())
    private var thread = pthread_t()
    private let loopThreadID = Atomic<UInt>(0)
    /// Held by whichever thread does the loop's work: the loop thread between waits, or a caller
    /// running `runOnLoop(_:)` while the loop waits.
    /// The value counts the turns callers took (not `Void`: ThreadSanitizer takes a zero-size
    /// value for the field beside it, and reports the lock-free read of that field as a race).
    private let ownership = LockedValue<Int>(0)
    /// The thread holding `ownership` (0 when none).
    private let ownerThreadID = Atomic<UInt>(0)
    private let wakeUps = Atomic<Int>(0)
    private let batchedResumes = Atomic<Int>(0)
    /// Scratch space for socket reads; loop-confined, so one per loop serves every connection.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
    /// Scratch space for decrypted bytes (one read's worth at most); loop-confined.
    let decryptBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
    let confined = Confined()
    private let name: String

    private enum LoopState { case running, stopping, stopped }

    /// Work posted from other threads, and whether more is accepted.
    private struct Queue {
        var state = LoopState.running
        var jobs: [@Sendable () -> Void] = []
        /// True while the loop is in (or about to enter) epoll_wait: only then does posting work
        /// need the eventfd write (a system call) to wake it.
        var sleeping = false
    }

    /// Loop-thread state.
    final class Confined {
        var handlers: [Int32: Registration] = [:]
        var nextGeneration: UInt32 = 1
        var timers = TimerHeap()
        /// When the waiting loop wakes by itself (its earliest timer); nil when only an event can
        /// wake it.
        var plannedWake: ContinuousClock.Instant?
        /// A caller holding the loop scheduled a timer earlier than `plannedWake`.
        var wakeNeeded = false
        /// While the loop delivers a batch of events: work deferred to the batch's end (see
        /// `deferToBatchEnd`).
        var deferred: [() -> Void]?
    }

    struct Registration {
        let generation: UInt32
        var interest: UInt32
        let handler: (UInt32) -> Void
        /// Called (on the loop) when the loop shuts down with the descriptor still registered.
        let shutDown: (() -> Void)?
    }

    /// The loop shared by sessions that do not bring their own; started on first use.
    public static let shared: EventLoop = {
        try! EventLoop(name: "sesame-shared")  // safe: without epoll nothing can work
    }()

    /// Starts a loop on a new thread.
    /// - Throws: ``SesameError/Code/ioError`` when epoll or eventfd cannot be created.
    public init(name: String = "sesame-loop") throws {
        self.name = name
        epollFD = CSesameShims_epoll_create()
        guard epollFD >= 0 else { throw SesameError(.ioError, "epoll_create1: \(String(cString: strerror(errno)))") }
        wakeFD = CSesameShims_eventfd()
        guard wakeFD >= 0 else {
            close(epollFD)
            throw SesameError(.ioError, "eventfd: \(String(cString: strerror(errno)))")
        }
        _ = CSesameShims_epoll_ctl(epollFD, EPOLL_CTL_ADD, wakeFD, CSesameShims_EPOLLIN(), UInt64(UInt32.max))
        let box = Unmanaged.passRetained(self)
        let created = pthread_create(
            &thread,
            nil,
            { raw in
                let loop = Unmanaged<EventLoop>.fromOpaque(raw!).takeRetainedValue()  // safe: passed below
                loop.run()
                return nil
            },
            box.toOpaque()
        )
        guard created == 0 else {
            box.release()
            close(epollFD)
            close(wakeFD)
            throw SesameError(.ioError, "pthread_create: \(String(cString: strerror(created)))")
        }
    }

    deinit {
        close(epollFD)
        close(wakeFD)
        readBuffer.deallocate()
        decryptBuffer.deallocate()
    }

    /// How many times the loop has woken from `epoll_wait` (for tests showing an idle loop stays idle).
    var wakeUpCount: Int { wakeUps.load(ordering: .relaxed) }
    /// How many pieces of work ran together with others after a batch of events (for tests).
    var batchedResumeCount: Int { batchedResumes.load(ordering: .relaxed) }

    /// True when called on the loop: on its thread between waits, or inside `runOnLoop(_:)`.
    public var inEventLoop: Bool { ownerThreadID.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// True on the loop's own thread (also while it waits).
    var isLoopThread: Bool { loopThreadID.load(ordering: .acquiring) == UInt(pthread_self()) }

    /// Runs `work` on the loop thread, after work posted earlier.
    /// - Returns: `false` when the loop has shut down and `work` will not run.
    @discardableResult
    public func execute(_ work: @escaping @Sendable () -> Void) -> Bool {
        let (accepted, wake) = queue.withLock { queue -> (Bool, Bool) in
            guard case .running = queue.state else { return (false, false) }
            queue.jobs.append(work)
            let wake = queue.sleeping
            queue.sleeping = false
            return (true, wake)
        }
        if wake {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }
        return accepted
    }

    /// Runs `work` on the loop: at once when already on it; on the calling thread when the loop is
    /// waiting for events (the caller holds the loop's ownership meanwhile, so the loop thread is
    /// not woken for work it would only hand back); else posted like ``execute(_:)``.
    /// - Returns: `false` when the loop has shut down and `work` will not run.
    @discardableResult
    func runOnLoop(_ work: @escaping @Sendable () -> Void) -> Bool {
        if runInline(work) != nil { return true }
        return execute(work)
    }

    /// Runs `work` on the loop now, on this thread: when already on the loop, or when the loop
    /// waits for events (as ``runOnLoop(_:)`` does). Returns nil, without running it, when the loop
    /// is busy or has shut down.
    func runInline<Result>(_ work: () -> Result) -> Result? {
        if inEventLoop { return work() }
        let result = ownership.withLockIfAvailable { turns -> Result? in
            guard queue.withLock({ $0.state == .running }) else { return nil }
            turns += 1
            ownerThreadID.store(UInt(pthread_self()), ordering: .releasing)
            let result = work()
            ownerThreadID.store(0, ordering: .releasing)
            // Work posted meanwhile already woke the loop (see `execute`); an earlier timer has not.
            if confined.wakeNeeded {
                confined.wakeNeeded = false
                var one: UInt64 = 1
                _ = write(wakeFD, &one, 8)
            }
            return result
        }
        return result ?? nil
    }

    /// How many times a caller's thread did the loop's work (for tests).
    var callerTurns: Int { ownership.withLock { $0 } }

    /// Stops the loop after the work already posted, and waits for its thread to end. Connections
    /// still on the loop close, and what waited on them (connecting, reads, writes) fails with
    /// ``SesameError/Code/eventLoopShutDown``. Must not be called on the loop thread.
    public func shutdown() {
        precondition(!inEventLoop, "EventLoop.shutdown() called on its own thread")
        let first = queue.withLock { queue -> Bool in
            guard case .running = queue.state else { return false }
            queue.state = .stopping
            return true
        }
        guard first else { return }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
        pthread_join(thread, nil)
    }

    // MARK: - The loop

    private func run() {
        let me = UInt(pthread_self())
        loopThreadID.store(me, ordering: .releasing)
        var events = [UInt32](repeating: 0, count: 64)
        var datas = [UInt64](repeating: 0, count: 64)
        var count = 0
        while true {
            // The loop's work happens while holding its ownership; the wait does not.
            let timeout = ownership.withLock { _ -> Int32? in
                ownerThreadID.store(me, ordering: .releasing)
                defer { ownerThreadID.store(0, ordering: .releasing) }
                if runBatch(events: events, datas: datas, count: count) { return nil }
                let now = ContinuousClock.now
                var timeout = confined.timers.millisecondsUntilNext(now: now)
                let hasWork = queue.withLock { queue -> Bool in
                    if !queue.jobs.isEmpty || queue.state != .running { return true }
                    queue.sleeping = true
                    return false
                }
                if hasWork { timeout = 0 }
                confined.plannedWake = timeout < 0 ? nil : now + .milliseconds(Int64(timeout))
                confined.wakeNeeded = false
                return timeout
            }
            guard let timeout else { break }
            let result = CSesameShims_epoll_wait(epollFD, &events, &datas, 64, timeout)
            let failed = result < 0 && errno != EINTR
            queue.withLock { $0.sleeping = false }
            wakeUps.add(1, ordering: .relaxed)
            if failed { break }
            count = max(0, Int(result))
        }
        ownership.withLock { _ in
            ownerThreadID.store(me, ordering: .releasing)
            defer { ownerThreadID.store(0, ordering: .releasing) }
            queue.withLock { $0.state = .stopped }
            // What is still registered would wait forever: tell it (connections fail their reads
            // and writes with eventLoopShutDown and close their sockets).
            let remaining = confined.handlers.values
            confined.handlers.removeAll()
            for registration in remaining { registration.shutDown?() }
            confined.timers = TimerHeap()
        }
    }

    /// Delivers ready events, then due timers, then posted work. Returns true when the loop is
    /// stopping (the work taken was the last to run).
    private func runBatch(events: [UInt32], datas: [UInt64], count: Int) -> Bool {
        if count > 1 { confined.deferred = [] }
        for index in 0..<count {
            let data = datas[index]
            if data == UInt64(UInt32.max) {
                var value: UInt64 = 0
                _ = read(wakeFD, &value, 8)
                continue
            }
            let fd = Int32(bitPattern: UInt32(truncatingIfNeeded: data))
            let generation = UInt32(truncatingIfNeeded: data >> 32)
            // A handler earlier in this batch may have closed the descriptor (and another
            // registration may reuse the number): deliver only to the registration the event is for.
            guard let registration = confined.handlers[fd], registration.generation == generation else { continue }
            registration.handler(events[index])
        }
        if let deferred = confined.deferred {
            confined.deferred = nil
            if deferred.count > 1 { batchedResumes.add(deferred.count, ordering: .relaxed) }
            for work in deferred { work() }
        }
        // Taken off the heap first, then run: a timer's work may schedule or cancel timers.
        for work in confined.timers.takeDue(now: ContinuousClock.now) { work() }
        let (pending, stopping) = queue.withLock { queue -> ([@Sendable () -> Void], Bool) in
            let taken = queue.jobs
            queue.jobs.removeAll(keepingCapacity: true)
            // Once stopping, nothing new is accepted: what was taken is the last work to run.
            return (taken, queue.state != .running)
        }
        for job in pending { job() }
        return stopping
    }
}

extension EventLoop: TaskExecutor {
    /// Runs Swift tasks that prefer this executor on the loop thread, so that a request's awaits
    /// on its connection resume without a thread hop. Code running this way must not block.
    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        if !execute({ unowned.runSynchronously(on: executor) }) {
            // A shut-down loop cannot run it; run it where we are rather than lose the task.
            unowned.runSynchronously(on: executor)
        }
    }
}
