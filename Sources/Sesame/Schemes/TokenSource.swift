import FoundationEssentials
import Glibc

/// A token as a request carries it: with the number of refreshes that had ended when it was
/// handed out, so that a refusal that crossed a refresh is answered by that refresh's outcome.
struct IssuedToken: Sendable, Equatable {
    let value: String
    let generation: Int
}

/// A session's Bearer token: the one it sends now, and at most one refresh in flight that every
/// request refused meanwhile waits for.
final class TokenSource: Sendable {
    private struct State {
        /// The token requests carry; nil until the authenticator was asked, and after a refresh
        /// failed (the authenticator's current token may have changed since).
        var token: String?
        var isRefreshing = false
        /// How many refreshes have ended, and how the last one failed (nil: it succeeded).
        var refreshes = 0
        var lastFailure: SesameError?
        /// The requests waiting for the refresh in flight, by a number of their own.
        var waiters: [Int: CheckedContinuation<String, any Error>] = [:]
        var nextWaiter = 0
    }

    private enum Start {
        case ready(String)
        case failed(SesameError)
        case cancelled
        case waiting
        case refresh
    }

    let bearer: BearerAuthentication
    private let state = LockedValue(State())
    private let report: @Sendable (SessionEvent) -> Void

    init(_ bearer: BearerAuthentication, report: @escaping @Sendable (SessionEvent) -> Void) {
        self.bearer = bearer
        self.report = report
    }

    /// The token to send: the one kept, else the authenticator's current one, else a new one. A
    /// refresh in flight is waited for: the token it replaces was refused.
    func token(for origin: Origin) async throws -> IssuedToken {
        let (kept, isRefreshing, generation) = state.withLock { ($0.token, $0.isRefreshing, $0.refreshes) }
        if let kept, !isRefreshing { return IssuedToken(value: kept, generation: generation) }
        if isRefreshing {
            _ = try await refreshed(rejecting: nil, generation: generation, for: origin)
            return try await token(for: origin)
        }
        let current: String?
        do {
            // User code never runs on an event loop's thread.
            current = try await withTaskExecutorPreference(globalConcurrentExecutor) {
                try await self.bearer.authenticator.currentToken()
            }
        } catch {
            throw SesameError(.serverAuthenticationFailed, "the token authenticator gave no token: \(error)")
        }
        guard let current else {
            _ = try await refreshed(rejecting: nil, generation: generation, for: origin)
            return try await token(for: origin)
        }
        let token = try BearerAuthentication.validated(current, from: "the authenticator gave")
        // A refresh that ended meanwhile wins: its token is newer.
        return state.withLock { state in
            if state.token == nil, state.refreshes == generation { state.token = token }
            return IssuedToken(value: state.token ?? token, generation: state.refreshes)
        }
    }

    /// A token other than `rejected` (handed out at `generation`): the outcome of a refresh that
    /// ended since, the one in flight, or a new refresh's. A refresh that failed after the
    /// refused request was sent fails it too, without another refresh. The calling task stops
    /// waiting when it is cancelled; the refresh goes on for the others.
    func refreshed(rejecting rejected: String?, generation: Int, for origin: Origin) async throws -> String {
        let waiter = state.withLock { state -> Int in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let start = state.withLock { state -> Start in
                    if !state.isRefreshing, state.refreshes > generation {
                        if let failure = state.lastFailure { return .failed(failure) }
                        if let token = state.token { return .ready(token) }
                    }
                    if !state.isRefreshing, let token = state.token, token != rejected { return .ready(token) }
                    guard !Task.isCancelled else { return .cancelled }
                    state.waiters[waiter] = continuation
                    guard !state.isRefreshing else { return .waiting }
                    state.isRefreshing = true
                    return .refresh
                }
                switch start {
                case .ready(let token):
                    continuation.resume(returning: token)
                case .failed(let failure):
                    continuation.resume(throwing: failure)
                case .cancelled:
                    continuation.resume(throwing: CancellationError())
                case .waiting:
                    break
                case .refresh:
                    // Unstructured: the refresh serves every waiter, whichever of them is cancelled.
                    // On the global executor: user code never runs on an event loop's thread.
                    Task(executorPreference: globalConcurrentExecutor) {
                        await self.refresh(rejecting: rejected, for: origin)
                    }
                }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: waiter) }?.resume(throwing: CancellationError())
        }
    }

    /// Runs the authenticator's refresh and hands its outcome to every waiter, once.
    private func refresh(rejecting rejected: String?, for origin: Origin) async {
        let outcome: Result<String, SesameError>
        do {
            let token = try await bearer.authenticator.refreshToken(rejecting: rejected)
            outcome = .success(try BearerAuthentication.validated(token, from: "the refresh returned"))
        } catch let error as SesameError where error.code == .serverAuthenticationFailed {
            outcome = .failure(error)
        } catch {
            outcome = .failure(SesameError(.serverAuthenticationFailed, "refreshing the token failed: \(error)"))
        }
        let waiters = state.withLock { state -> [CheckedContinuation<String, any Error>] in
            state.isRefreshing = false
            state.refreshes += 1
            switch outcome {
            case .success(let token): (state.token, state.lastFailure) = (token, nil)
            case .failure(let error): (state.token, state.lastFailure) = (nil, error)
            }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        switch outcome {
        case .success:
            report(.tokenRefreshed(origin: origin.description, waiting: waiters.count))
        case .failure(let error):
            report(.tokenRefreshFailed(origin: origin.description, error))
        }
        for waiter in waiters { waiter.resume(with: outcome.mapError { $0 as any Error }) }
    }
}
