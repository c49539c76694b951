internal import CSesameShims
import FoundationEssentials
import Glibc
import Synchronization

/// An epoll reactor on a thread of its own.
///
/// Everything that belongs to the loop (its descriptors, their handlers, its timers, the
/// connections on it and their state) is touched by the loop's thread only: ``inEventLoop`` is
/// true there and nowhere else. Other threads hand it work with ``execute(_:)``; Swift tasks that
/// prefer the loop as their executor (`withTaskExecutorPreference(loop)`) run on its thread, so
/// that a request's code and its connection's code meet without a lock or a thread hop. The
/// loop's thread is not one of Swift's concurrency threads: it may wait in `epoll_wait` without
/// holding one of theirs, and nothing that runs on it may block.
///
/// One turn of the loop: the events `epoll_wait` returned, the timers that came due, the work
/// posted (up to a bound, so that a stream of work cannot starve the sockets), then the work
/// registered for the turn's end (`atTurnEnd(_:)`: output that many requests of one turn share
/// goes out in one write).
public final class EventLoop: @unchecked Sendable {
    // @unchecked: `posted` is locked; `confined` is touched only by the loop thread (asserted
    // through `inEventLoop`); `thread` is written once in init and read by `shutdown` after init.
    let epollFD: Int32
    private let wakeFD: Int32
    private let posted = LockedValue(Posted())
    /// Set once the loop takes no new work (it is stopping or stopped).
    private let closed = Atomic<Bool>(false)
    private var thread = pthread_t()
    private let loopThreadID = Atomic<UInt>(0)
    private let wakeUps = Atomic<Int>(0)
    /// The time the loop's timers follow (``LoopClock/system`` unless a test brought its own).
    public let clock: LoopClock
    /// Scratch space for socket reads; loop-confined, so one per loop serves every connection.
    let readBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
    /// Scratch space for decrypted bytes (one read's worth at most); loop-confined.
    let decryptBuffer = UnsafeMutableRawBufferPointer.allocate(byteCount: 65_536, alignment: 16)
    let confined = Confined()

    /// Work posted, and what the loop is doing.
    private struct Posted {
        var jobs: [Work] = []
        var stopping = false
        /// True while the loop is in (or about to enter) `epoll_wait`: only then does posting
        /// need the eventfd write (a system call) to wake it.
        var sleeping = false
    }

    /// One piece of work: a closure, or a Swift task's job (enqueued without a closure around it).
    // @unchecked: a closure posted from another thread is `@Sendable` (``execute(_:)``); one that
    // is not goes only into `confined.local`, from the loop's own thread.
    enum Work: @unchecked Sendable {
        case closure(() -> Void)
        case job(UnownedJob)
    }

    /// Loop-thread state.
    final class Confined {
        var handlers: [Int32: Registration] = [:]
        var nextGeneration: UInt32 = 1
        var timers = TimerHeap()
        /// Work the loop's own thread posted (a task resumed here that prefers the loop).
        var local: [Work] = []
        /// Work for the end of the current turn.
        var turnEnd: [() -> Void] = []
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
    /// - Parameters:
    ///   - name: the thread's name (up to 15 bytes of it, as Linux keeps them).
    ///   - clock: the time the loop's timers follow; ``LoopClock/manual()`` in tests that move
    ///     time themselves.
    /// - Throws: ``SesameError/Code/ioError`` when epoll, eventfd or the thread cannot be created.
    public init(name: String = "sesame-loop", clock: LoopClock = .system) throws {
        self.clock = clock
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
        _ = CSesameShims_name_thread(thread, String(decoding: name.utf8.prefix(15), as: UTF8.self))
        clock.attach(self)
    }

    deinit {
        close(epollFD)
        close(wakeFD)
        readBuffer.deallocate()
        decryptBuffer.deallocate()
    }

    /// How many times the loop has woken from `epoll_wait` (for tests showing an idle loop stays idle).
    var wakeUpCount: Int { wakeUps.load(ordering: .relaxed) }

    /// True on the loop's thread.
    public var inEventLoop: Bool { loopThreadID.load(ordering: .relaxed) == UInt(pthread_self()) }

    /// The loop's current instant (see ``clock``).
    public var now: ContinuousClock.Instant { clock.now }

    /// Runs `work` on the loop thread, after work posted earlier from the same thread.
    /// - Returns: `false` when the loop has shut down and `work` will not run.
    @discardableResult
    public func execute(_ work: @escaping @Sendable () -> Void) -> Bool {
        post(.closure(work))
    }

    private func post(_ work: Work) -> Bool {
        guard !closed.load(ordering: .acquiring) else { return false }
        if inEventLoop {
            confined.local.append(work)
            return true
        }
        let (accepted, wake) = posted.withLock { posted -> (Bool, Bool) in
            guard !posted.stopping else { return (false, false) }
            posted.jobs.append(work)
            let wake = posted.sleeping
            posted.sleeping = false
            return (true, wake)
        }
        if wake {
            var one: UInt64 = 1
            _ = write(wakeFD, &one, 8)
        }
        return accepted
    }

    /// A manual clock moved: the loop looks at its timers again.
    func clockMoved() { execute {} }

    /// Stops the loop after the work already posted, and waits for its thread to end. Connections
    /// still on the loop close, and what waited on them (connecting, reads, writes) fails with
    /// ``SesameError/Code/eventLoopShutDown``. Must not be called on the loop thread.
    public func shutdown() {
        precondition(!inEventLoop, "EventLoop.shutdown() called on its own thread")
        let first = posted.withLock { posted -> Bool in
            guard !posted.stopping else { return false }
            posted.stopping = true
            return true
        }
        guard first else { return }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
        pthread_join(thread, nil)
    }

    // MARK: - The loop

    /// The most pieces of posted work one turn runs before the loop looks at its sockets again.
    private static let workPerTurn = 4096

    private func run() {
        loopThreadID.store(UInt(pthread_self()), ordering: .relaxed)
        var events = [UInt32](repeating: 0, count: 64)
        var datas = [UInt64](repeating: 0, count: 64)
        var count = 0
        while true {
            deliver(events: events, datas: datas, count: count)
            for work in confined.timers.takeDue(now: clock.now) { work() }
            let stopping = runPostedWork()
            runTurnEnd()
            if stopping { break }
            var timeout = clock.millisecondsUntil(confined.timers.nextDeadline())
            if !confined.local.isEmpty {
                timeout = 0
            } else {
                let busy = posted.withLock { posted -> Bool in
                    if !posted.jobs.isEmpty || posted.stopping { return true }
                    posted.sleeping = true
                    return false
                }
                if busy { timeout = 0 }
            }
            let result = CSesameShims_epoll_wait(epollFD, &events, &datas, 64, timeout)
            let failed = result < 0 && errno != EINTR
            if timeout != 0 { posted.withLock { $0.sleeping = false } }
            wakeUps.add(1, ordering: .relaxed)
            if failed { break }
            count = max(0, Int(result))
        }
        stop()
    }

    /// The last turn: nothing new is accepted, and what is still registered would wait forever,
    /// so it is told (connections fail their waiting work with eventLoopShutDown).
    private func stop() {
        closed.store(true, ordering: .releasing)
        posted.withLock { $0.stopping = true }
        let remaining = confined.handlers.values
        confined.handlers.removeAll()
        for registration in remaining { registration.shutDown?() }
        _ = runPostedWork()
        runTurnEnd()
        confined.timers = TimerHeap()
    }

    private func deliver(events: [UInt32], datas: [UInt64], count: Int) {
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
    }

    /// Runs posted work, the loop's own and other threads', until none is left or the turn's
    /// bound is reached. Returns true when the loop is stopping.
    private func runPostedWork() -> Bool {
        var done = 0
        while done < Self.workPerTurn {
            var batch: [Work] = []
            swap(&batch, &confined.local)
            let (remote, stopping) = posted.withLock { posted -> ([Work], Bool) in
                var taken: [Work] = []
                swap(&taken, &posted.jobs)
                return (taken, posted.stopping)
            }
            if batch.isEmpty && remote.isEmpty { return stopping }
            for work in remote { perform(work) }
            for work in batch { perform(work) }
            done += batch.count + remote.count
        }
        return posted.withLock { $0.stopping }
    }

    private func perform(_ work: Work) {
        switch work {
        case .closure(let body): body()
        case .job(let job): job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }

    private func runTurnEnd() {
        // Work registered by turn-end work itself runs in the same turn, after it.
        while !confined.turnEnd.isEmpty {
            var batch: [() -> Void] = []
            swap(&batch, &confined.turnEnd)
            for work in batch { work() }
        }
    }
}

extension EventLoop: TaskExecutor {
    /// Runs Swift tasks that prefer this executor on the loop thread, so that a request's awaits
    /// on its connection resume without a thread hop. Code running this way must not block.
    public func enqueue(_ job: consuming ExecutorJob) {
        let unowned = UnownedJob(job)
        if !post(.job(unowned)) {
            // A shut-down loop cannot run it; run it where we are rather than lose the task.
            unowned.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
