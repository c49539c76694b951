internal import CSesameShims
import FoundationEssentials
import Glibc
import Synchronization

// What the loop offers the layers above, on the loop: descriptors to watch, timers, the end of
// an event batch, and per-loop state.
extension EventLoop {
    /// Watches `fd` for `interest` (EPOLLIN/EPOLLOUT bits); `handler` gets the ready events.
    /// `shutDown` runs if the loop shuts down while `fd` is still registered, so that what waits on
    /// it can fail instead of waiting forever.
    func register(
        fd: Int32,
        interest: UInt32,
        shutDown: (() -> Void)? = nil,
        handler: @escaping (UInt32) -> Void
    ) throws {
        assert(inEventLoop)
        let generation = confined.nextGeneration
        confined.nextGeneration &+= 1
        let data = (UInt64(generation) << 32) | UInt64(UInt32(bitPattern: fd))
        guard CSesameShims_epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, interest, data) == 0 else {
            throw SesameError(.ioError, "epoll_ctl(ADD): \(String(cString: strerror(errno)))")
        }
        confined.handlers[fd] = Registration(
            generation: generation,
            interest: interest,
            handler: handler,
            shutDown: shutDown
        )
    }

    /// Changes what `fd` is watched for; 0 watches nothing (errors are still reported).
    func setInterest(fd: Int32, _ interest: UInt32) {
        assert(inEventLoop)
        guard var registration = confined.handlers[fd], registration.interest != interest else { return }
        registration.interest = interest
        confined.handlers[fd] = registration
        let data = (UInt64(registration.generation) << 32) | UInt64(UInt32(bitPattern: fd))
        _ = CSesameShims_epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, interest, data)
    }

    /// Stops watching `fd`. Call before closing it.
    func deregister(fd: Int32) {
        assert(inEventLoop)
        guard confined.handlers.removeValue(forKey: fd) != nil else { return }
        _ = CSesameShims_epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, 0, 0)
    }

    /// True while the loop delivers a batch of several events (`deferToBatchEnd` applies).
    var isDeliveringBatch: Bool {
        assert(inEventLoop)
        return confined.deferred != nil
    }

    /// Runs `work` once the batch of events being delivered is handled (only while
    /// ``isDeliveringBatch``). Continuations resumed this way reach the concurrency threads in one
    /// burst, which wakes a thread once for many of them (resumed one by one between the loop's
    /// reads, each woke a thread that had just gone to sleep).
    func deferToBatchEnd(_ work: @escaping () -> Void) {
        assert(inEventLoop && confined.deferred != nil)
        confined.deferred?.append(work)
    }

    /// Runs `work` on the loop after `delay`, unless cancelled first.
    func scheduleTimer(after delay: Duration, _ work: @escaping () -> Void) -> TimerHandle {
        scheduleTimer(at: ContinuousClock.now + delay, work)
    }

    /// Runs `work` on the loop at `deadline`, unless cancelled first.
    func scheduleTimer(at deadline: ContinuousClock.Instant, _ work: @escaping () -> Void) -> TimerHandle {
        assert(inEventLoop)
        if !isLoopThread, confined.plannedWake.map({ deadline < $0 }) ?? true {
            confined.wakeNeeded = true  // the waiting loop must compute its wait again
        }
        return confined.timers.schedule(at: deadline, work)
    }

    /// Cancels a timer that has not fired; harmless otherwise.
    func cancelTimer(_ handle: TimerHandle) {
        assert(inEventLoop)
        confined.timers.cancel(handle)
    }
}
