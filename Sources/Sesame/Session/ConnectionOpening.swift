/// A step of a task's driver that opens a connection (TCP, TLS, a `CONNECT`), run beside the
/// driver so that the challenges its handshakes raise (server trust, a client certificate) come
/// to the driver as events of the task's state machine, one at a time, and the driver's answers
/// go back to the handshake waiting for them.
final class ConnectionOpening: Sendable {
    /// What the step came to.
    enum Outcome: Sendable {
        /// A carrier for the exchange.
        case carrier(ConnectionPool.Carrier, TaskStateMachine.Exchange)
        /// The proxy's answer to a `CONNECT`, on `connection`, with the bytes that came after its
        /// head and whether the proxy keeps the connection after a refusal.
        case tunnelAnswer(HTTPResponse, connection: Connection, leftover: [UInt8], reusable: Bool)
    }

    /// What the driver learns next.
    enum Event: Sendable {
        /// A handshake asks this challenge; answer with ``answer(_:)``.
        case asks(ProtectionSpace)
        case finished(Result<Outcome, any Error>)
    }

    typealias Answer = (disposition: AuthChallengeDisposition, credential: Credential?)

    private struct State {
        var events: [Event] = []
        var driver: CheckedContinuation<Event, Never>?
        /// The handshakes waiting for an answer, in the order they asked.
        var questions: [CheckedContinuation<Answer, Never>] = []
        var task: Task<Void, Never>?
        var finished = false
        /// The driver stopped waiting for answers: a question asked now is cancelled at once.
        var cancelled = false
        /// The driver is gone: an outcome that comes now is discarded.
        var abandoned = false
    }

    private let state = LockedValue(State())
    /// Gives back what an outcome holds (a lease, a stream slot, a connection) when no driver
    /// takes it.
    private let discard: @Sendable (Outcome) -> Void

    /// Starts `step` on `executor` (the driver's event loop); `discard` gives back an outcome
    /// the driver no longer takes.
    init(
        on executor: some TaskExecutor,
        discard: @escaping @Sendable (Outcome) -> Void,
        step: @escaping @Sendable (ConnectionOpening) async throws -> Outcome
    ) {
        self.discard = discard
        let task = Task(executorPreference: executor) { [self] in
            let result: Result<Outcome, any Error>
            do {
                result = .success(try await step(self))
            } catch {
                result = .failure(error)
            }
            let unanswered = state.withLock { state in
                state.finished = true
                defer { state.questions = [] }
                return state.questions
            }
            for question in unanswered { question.resume(returning: (.cancelAuthenticationChallenge, nil)) }
            post(.finished(result))
        }
        state.withLock { $0.task = task }
    }

    /// Asks the driver about a handshake's challenge and waits for its answer (a step that
    /// already ended, or was cancelled, cancels the challenge).
    func ask(_ space: ProtectionSpace) async -> Answer {
        await withCheckedContinuation { continuation in
            let answerable = state.withLock { state in
                let answerable = !state.finished && !state.cancelled
                if answerable { state.questions.append(continuation) }
                return answerable
            }
            if !answerable { return continuation.resume(returning: (.cancelAuthenticationChallenge, nil)) }
            post(.asks(space))
        }
    }

    /// The next event, in order. A cancelled driver cancels the step, whose end then comes here.
    func next() async -> Event {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let event = state.withLock { state -> Event? in
                    guard state.events.isEmpty else { return state.events.removeFirst() }
                    state.driver = continuation
                    return nil
                }
                if let event { continuation.resume(returning: event) }
            }
        } onCancel: {
            cancel()
        }
    }

    /// The driver's answer to the oldest challenge asked.
    func answer(_ answer: Answer) {
        let question = state.withLock { $0.questions.isEmpty ? nil : $0.questions.removeFirst() }
        question?.resume(returning: answer)
    }

    /// The driver stops waiting: the step is cancelled, and a handshake waiting for an answer is
    /// told the challenge was cancelled.
    func cancel() {
        let (task, unanswered) = state.withLock { state in
            state.cancelled = true
            defer { state.questions = [] }
            return (state.task, state.questions)
        }
        task?.cancel()
        for question in unanswered { question.resume(returning: (.cancelAuthenticationChallenge, nil)) }
    }

    /// The driver stops for good without waiting for the end (it failed): the step is
    /// cancelled, and what it comes to is given back.
    func abandon() {
        let queued = state.withLock { state in
            state.abandoned = true
            defer { state.events = [] }
            return state.events
        }
        cancel()
        for case .finished(.success(let outcome)) in queued { discard(outcome) }
    }

    private func post(_ event: Event) {
        let (driver, abandoned) = state.withLock { state -> (CheckedContinuation<Event, Never>?, Bool) in
            if let driver = state.driver {
                state.driver = nil
                return (driver, false)
            }
            if !state.abandoned { state.events.append(event) }
            return (nil, state.abandoned)
        }
        if let driver { return driver.resume(returning: event) }
        if abandoned, case .finished(.success(let outcome)) = event { discard(outcome) }
    }
}
