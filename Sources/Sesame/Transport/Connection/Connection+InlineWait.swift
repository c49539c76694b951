internal import CSesameShims
import Foundation

// Waiting for an answer on the caller's thread.
//
// A task that writes a request while the loop sleeps does the loop's work itself (`runInline`).
// Left to the loop, the answer would then cost two thread wake-ups: the loop thread's, woken by
// epoll, and a Swift concurrency thread's, to continue the task. When the answer is expected
// soon, the caller's thread instead waits for it in ppoll(2) for at most `inlineWaitLimit` (the
// loop stops watching the socket meanwhile), then reads it and continues at once: one wake-up, as
// a blocking client has. This blocks a concurrency thread, so it happens only while it is cheap:
// - the peer's previous answer on this connection came within the limit (3 ms by default);
// - no other read waits on this loop, none did when each of the last 8 reads started, and no
//   other connection of the loop is lent out for an exchange (`InlineWaitPolicy`, which writes its
//   invariants down: the loop's other connections are not kept waiting, and concurrent tasks do
//   not hold threads the others need);
// - and never on the loop's own thread.
// While a caller's thread reads a connection this way, the loop watches its socket only for the
// peer closing it, also between reads and while the connection is idle in the pool: a body's next
// bytes, arriving while the caller handles the last ones, or the next request's answer, would
// wake the loop thread, which would then own the loop when the caller's read comes (the read would
// go through the loop: two more wake-ups). The watch stays the same from request to request (no
// epoll_ctl(2) per request). The loop watches for reading again when a read goes through it.
// A task whose read was answered this way held its thread without suspending, so after every 8
// such waits of the loop the waiting task yields before it goes on: tasks that wait for that
// thread (no count shows tasks that have not started) run first. They start their own exchanges,
// and the count of connections in use then keeps the next reads on the loop. Without it, with one
// concurrency thread, the first of 64 concurrent tasks answered every read of its own and gave the
// thread up only when it had finished: the tasks ran one after another over one connection
// (2,000 requests: one connect(2), 2,000 waits here and 80 epoll_wait(2) calls). Yielding after
// every wait instead cost 3 µs of processor time per request on one connection.
// When the limit passes, the read goes back to the loop as usual, and the next reads go through
// the loop too: 1 after the first such run-out, then 2, 4, … up to 1024 while waits keep running
// out. A peer that answers quickly only once the task's thread is free (one in this process,
// on the same concurrency threads) then costs at most one limit per 1024 requests.
extension Connection {
    /// Reads through `start` (which starts a read on the loop), waiting for the answer on this
    /// thread when that is worthwhile.
    func reading(
        _ start: @escaping @Sendable (ReadContinuation) -> Void
    ) async throws -> [UInt8] {
        var yields = false
        let bytes = try await withReadContinuation(handoff: readHandoff) { (continuation: ReadContinuation) in
            let inline = loop.runInline { () -> Socket? in
                start(continuation)
                guard let socket = self.beginInlineWait() else {
                    self.handReadToLoop()
                    return nil
                }
                yields = self.inlineWaits.waitBegan()
                return socket
            }
            if let inline {
                if let socket = inline { self.waitInline(on: socket) }
                return
            }
            let posted = loop.execute {
                start(continuation)
                self.handReadToLoop()
            }
            if !posted {
                continuation.resume(throwing: SesameError(.eventLoopShutDown, "the event loop has shut down"))
            }
        }
        // The thread was held without the task suspending: tasks queued for it meanwhile get
        // their turn (see above).
        if yields { await Task.yield() }
        return bytes
    }

    /// On the loop, on a caller's thread that has just started a read: when the read waits and
    /// waiting for it here is worthwhile (see above), stops watching the socket and returns it.
    /// Nil: the loop serves the read.
    private func beginInlineWait() -> Socket? {
        guard inlineWaitLimit > .zero, answersQuickly,
            pendingRead != nil, inlineWaits.allowsInlineWait,
            phase == .established, !socketEOF, let socket = channel?.socket, !loop.isLoopThread
        else { return nil }
        guard inlineWaitBackoff.skipsLeft == 0 else {
            inlineWaitBackoff.skipsLeft -= 1
            return nil
        }
        readState.callerBeganWaiting()
        updateInterest()
        return socket
    }

    /// A read the loop serves needs the socket watched.
    private func handReadToLoop() {
        guard readState == .callerReading, pendingRead != nil else { return }
        readState.readHandedToLoop()
        updateInterest()
    }

    /// Waits for `socket` to become readable, then serves the read on the loop; gives the read
    /// back to the loop when the limit passes (or the loop is busy when the bytes arrive).
    ///
    /// This runs outside the loop, so the loop may fail the connection at any moment: before the
    /// first ppoll(2) as well as during one. The descriptor stays open all the while: a connection
    /// torn down meanwhile only shuts the socket down (which ends or pre-empts the wait) and leaves
    /// closing it to the reference held here (see `tearDown`). Were it closed, its number could
    /// go at once to another socket of the process, on which this would wait instead.
    private func waitInline(on socket: Socket) {
        #if DEBUG
        inlineWaitWillStart?()
        #endif
        let deadline = ContinuousClock.now + inlineWaitLimit
        while true {
            let left = (deadline - ContinuousClock.now).components
            let nanoseconds = max(0, left.seconds * 1_000_000_000 + left.attoseconds / 1_000_000_000)
            let ready = CSesameShims_wait_readable(socket.fd, Int(nanoseconds)) != 0
            let finished = loop.runInline { () -> Bool in
                guard readState.callerIsWaiting else { return true }  // the connection failed or closed meanwhile
                if ready {
                    readFromSocket()
                    serveRead()
                }
                if pendingRead == nil || phase != .established {
                    endInlineWait(ranOut: false)
                    return true
                }
                if ContinuousClock.now >= deadline {
                    endInlineWait(ranOut: true)
                    return true
                }
                return false
            }
            guard let finished else {
                // The loop is busy: it serves what arrived (in time, when the wait saw it).
                loop.execute { self.endInlineWait(ranOut: !ready) }
                return
            }
            if finished { return }
        }
    }

    /// Hands the read (if still waiting) back to the loop. `ranOut`: the limit passed first, so
    /// the next reads go through the loop (see above).
    private func endInlineWait(ranOut: Bool) {
        guard readState.callerIsWaiting else { return }
        readState.callerStoppedWaiting(readStillWaiting: false)  // the caller still reads it, for now
        if ranOut {
            answersQuickly = false
            let length = min(max(1, inlineWaitBackoff.length * 2), 1024)
            inlineWaitBackoff = (length, length)
        } else {
            inlineWaitBackoff.length = 0
        }
        if pendingRead != nil {
            readFromSocket()
            serveRead()
        }
        // Still waiting: the loop serves the read, so it watches the socket (`progress` below).
        if pendingRead != nil { readState.readHandedToLoop() }
        progress()
    }

    /// Notes how long the read that is being answered waited for its bytes.
    func readAnswered() {
        guard let started = waitStartedAt else { return }
        waitStartedAt = nil
        answersQuickly = ContinuousClock.now - started < inlineWaitLimit
    }
}

extension Connection {
    /// A pool lent this connection out for an exchange: while another of the loop's connections
    /// is in use too, no caller's thread waits for a read itself (`InlineWaitPolicy`). Any thread;
    /// a second call before ``useEnded()`` counts nothing.
    func useBegan() {
        guard !inUseBox.exchange(true, ordering: .relaxed) else { return }
        inlineWaits.connectionsInUse.add(1)  // also `EventLoop.SchedulingPolicy`'s
    }

    /// The pool has the connection back (or it was closed). Any thread; once per ``useBegan()``.
    func useEnded() {
        guard inUseBox.exchange(false, ordering: .relaxed) else { return }
        inlineWaits.connectionsInUse.subtract(1)
    }
}
