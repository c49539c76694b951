internal import CSesameShims
import FoundationEssentials
import Glibc

// What the loop offers the layers above, on the loop: descriptors to watch, timers, and work for
// the end of the turn.
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

    /// Runs `work` once the current turn's events, timers and posted work are done: what several
    /// pieces of work of one turn produce (the frames of many HTTP/2 requests) leaves together.
    func atTurnEnd(_ work: @escaping () -> Void) {
        assert(inEventLoop)
        confined.turnEnd.append(work)
    }

    /// Runs `work` on the loop after `delay` of the loop's clock, unless cancelled first.
    func scheduleTimer(after delay: Duration, _ work: @escaping () -> Void) -> TimerHandle {
        scheduleTimer(at: now + delay, work)
    }

    /// Runs `work` on the loop at `deadline` (of the loop's clock), unless cancelled first.
    func scheduleTimer(at deadline: ContinuousClock.Instant, _ work: @escaping () -> Void) -> TimerHandle {
        assert(inEventLoop)
        return confined.timers.schedule(at: deadline, work)
    }

    /// Cancels a timer that has not fired; harmless otherwise.
    func cancelTimer(_ handle: TimerHandle) {
        assert(inEventLoop)
        confined.timers.cancel(handle)
    }

    /// Runs `body` on the loop and returns its result: at once when called on the loop, else
    /// after a hop there (the caller suspends, holding no thread).
    /// - Throws: ``SesameError/Code/eventLoopShutDown`` when the loop has shut down.
    func onLoop<Result: Sendable>(_ body: @escaping @Sendable () throws -> Result) async throws -> Result {
        if inEventLoop { return try body() }
        return try await withCheckedThrowingContinuation { continuation in
            let posted = execute { continuation.resume(with: Swift.Result { try body() }) }
            if !posted {
                continuation.resume(throwing: SesameError(.eventLoopShutDown, "the event loop has shut down"))
            }
        }
    }
}
