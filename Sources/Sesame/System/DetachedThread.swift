import Glibc

/// A thread of Sesame's own, started with plain pthreads, that runs `body` once and ends.
package enum DetachedThread {
    /// Starts a thread running `body`.
    /// - Returns: false when the system refused to create the thread.
    package static func start(_ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(Work(body: body))
        var thread = pthread_t()
        let created = pthread_create(
            &thread,
            nil,
            { raw in
                let work = Unmanaged<Work>.fromOpaque(raw!).takeRetainedValue()  // safe: passed below
                work.body()
                return nil
            },
            box.toOpaque()
        )
        guard created == 0 else {
            box.release()
            return false
        }
        pthread_detach(thread)
        return true
    }

    private final class Work: Sendable {
        let body: @Sendable () -> Void
        init(body: @escaping @Sendable () -> Void) { self.body = body }
    }
}
