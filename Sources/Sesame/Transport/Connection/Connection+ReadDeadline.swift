// Read timeouts: one watchdog timer per connection, moved on by each read.
extension Connection {
    /// A read started with `endsQuietly` saw no byte by its deadline; the connection goes on.
    struct ReadWaitEnded: Error {}

    /// Read deadlines are watched by one timer per connection, not one per read: a keep-alive
    /// connection's next read only moves the deadline on (no timer to schedule, cancel, or wake
    /// the loop for). The timer stops when it fires with no read waiting.
    func watchRead(until deadline: ContinuousClock.Instant, timeout: Duration) {
        readDeadline = (deadline, timeout)
        if let watchdog = readWatchdog {
            if watchdog.at <= deadline { return }
            loop.cancelTimer(watchdog.handle)
        }
        armReadWatchdog(at: deadline)
    }

    private func armReadWatchdog(at deadline: ContinuousClock.Instant) {
        let handle = loop.scheduleTimer(at: deadline) { [weak self] in self?.readWatchdogFired() }
        readWatchdog = (handle, deadline)
    }

    /// Ends the waiting read, when it was started with `endsQuietly`, as its deadline would
    /// (``ReadWaitEnded``); the connection goes on. On the loop.
    func withdrawQuietRead() {
        guard readEndsQuietly, let (_, continuation) = pendingRead else { return }
        clearPendingRead()
        updateInterest()
        continuation.resume(throwing: ReadWaitEnded())
    }

    private func readWatchdogFired() {
        readWatchdog = nil
        guard pendingRead != nil, let (deadline, timeout) = readDeadline else { return }
        if ContinuousClock.now >= deadline, readEndsQuietly {
            withdrawQuietRead()
        } else if ContinuousClock.now >= deadline {
            fail(SesameError(.timeout, "\(host):\(port) sent nothing for \(timeout)"))
        } else {
            armReadWatchdog(at: deadline)
        }
    }
}
