import FoundationEssentials
import Sesame

/// `sesame [fetch] URL`: one request, curl's way.
enum FetchCommand {
    static func run(arguments: [String]) async -> ExitCode {
        let options: FetchOptions
        do {
            options = try FetchOptions.parse(arguments)
        } catch {
            Output.error("\(error)")
            return .usage
        }
        let plan: FetchPlan
        do {
            let started = ContinuousClock.now
            let identity = try await FetchConnectionOptions.identity(options, within: options.maximumTime)
            var remaining = options
            remaining.maximumTime = options.maximumTime.map { $0 - (ContinuousClock.now - started) }
            plan = try FetchPlan.make(remaining, identity: identity)
        } catch {
            // Setting up reads files (certificates, keys, cookie and credential stores): their
            // errors are the user's input, never the server's.
            Output.error("\(error)")
            return ExitCode(error, settingUp: true)
        }
        if options.insecure {
            Output.error(
                "warning: --insecure: the server's certificate is NOT checked; anyone on the path can read and change this exchange"
            )
        }
        let session = Session(configuration: plan.configuration)
        let (request, sink, cookies, authentication) = (plan.request, plan.sink, plan.cookies, plan.authentication)
        let delegate = FetchDelegate(options: options, sink: sink)
        // The delegate's state and the sink are written on the session's task and read here once
        // it completed. The outcome passes through a lock so that the order is one
        // ThreadSanitizer sees: a continuation resumed before its task suspended (a quick
        // transfer) orders the two only inside the runtime, which the sanitizer cannot see.
        let handoff = LockedValue<(any Error)??>(nil)
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            delegate.completion = { error in
                handoff.withLock { $0 = .some(error) }
                continuation.resume()
            }
            session.dataTask(with: request, delegate: delegate).resume()
        }
        let outcome: (any Error)? = handoff.withLock { $0 } ?? nil
        if let problem = cookies.save() {
            Output.error(problem)
            return .failure
        }
        if outcome == nil,
            let exit = authentication.finish(
                finalStatus: delegate.finalStatus,
                finalURL: delegate.finalURL ?? request.url,
                requestURL: request.url
            )
        {
            sink.discard()
            return exit
        }
        return finish(outcome, options: options, delegate: delegate, sink: sink)
    }

    private static func finish(
        _ outcome: (any Error)?,
        options: FetchOptions,
        delegate: FetchDelegate,
        sink: BodySink
    )
        -> ExitCode
    {
        let quiet = options.silent && !options.showError
        if let status = delegate.failedStatus {
            sink.discard()
            if !quiet { Output.error("the requested URL returned error: \(status)") }
            return .httpError
        }
        if let problem = delegate.decodeFailure {
            sink.discard()
            if !quiet { Output.error(problem) }
            return .failure
        }
        guard let outcome else {
            do {
                try sink.commit()
            } catch {
                if !quiet { Output.error("\(error)") }
                return .failure
            }
            return .ok
        }
        sink.discard()
        if !quiet { Output.error("\(outcome)") }
        return ExitCode(outcome)
    }
}
