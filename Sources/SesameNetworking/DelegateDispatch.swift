import Foundation

/// Apple's rule for a task's callbacks, per method: the task's own delegate answers when it
/// implements the method, else the session's delegate does. Swift has no optional protocol
/// methods, so the protocols' default implementations report that they were reached (on the
/// delegate queue's thread, where the call is made) and the next delegate is asked.
enum DelegateDispatch {
    private final class State {
        var depth = 0
        var missed = false
    }

    /// Each thread's state, in a pthread key (Foundation's `threadDictionary` would make a
    /// `Thread` object for every dispatch worker that calls a delegate).
    private static let key: pthread_key_t = {
        var key = pthread_key_t()
        // Freed with the thread; the dispatch stays in one thread from start to end.
        let created = pthread_key_create(&key) { pointer in
            if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() }
        }
        precondition(created == 0, "pthread_key_create failed")
        return key
    }()

    private static var state: State {
        if let pointer = pthread_getspecific(key) {
            return Unmanaged<State>.fromOpaque(pointer).takeUnretainedValue()
        }
        let state = State()
        pthread_setspecific(key, Unmanaged.passRetained(state).toOpaque())
        return state
    }

    /// Calls `method` on each delegate in turn until one implements it; false when none did
    /// (the caller then does what the method's default would). A delegate given twice (the
    /// task's and the session's the same object) is asked once.
    @discardableResult
    static func first<Delegate>(_ delegates: [Delegate?], _ method: (Delegate) -> Void) -> Bool {
        var asked: [ObjectIdentifier] = []
        for case let delegate? in delegates {
            let identity = ObjectIdentifier(delegate as AnyObject)
            guard !asked.contains(identity) else { continue }
            asked.append(identity)
            let state = state
            let (depth, missed) = (state.depth, state.missed)
            state.depth += 1
            state.missed = false
            method(delegate)
            let reachedDefault = state.missed
            (state.depth, state.missed) = (depth, missed)
            if !reachedDefault { return true }
        }
        return false
    }

    /// Called by a default implementation: true when a dispatch is asking, which then moves on
    /// to the next delegate (the default does nothing more); false for a direct call, where the
    /// default does what Apple's would.
    static func reportMissing() -> Bool {
        let state = state
        guard state.depth > 0 else { return false }
        state.missed = true
        return true
    }
}
