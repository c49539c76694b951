internal import CSesameShims
import Dispatch
import FoundationEssentials
import Glibc

/// Watches the Secret Service's collections for items created, deleted or changed by any process
/// (`org.freedesktop.Secret.Collection`'s `ItemCreated`, `ItemDeleted`, `ItemChanged` signals),
/// on a thread of its own running a private GLib main context. It reports only that something
/// changed; ``CredentialStorage`` reads the store again and works out what.
final class SecretServiceWatcher: @unchecked Sendable {
    // @unchecked: `loop` and `context` are written once on the watcher's thread before `ready`
    // is signalled, then only read; GLib's main-loop calls used from other threads
    // (`g_main_loop_quit`) are thread-safe.
    private let functions: Functions
    private let library: LibSecret
    private let continuation: AsyncStream<Void>.Continuation
    private var loop: OpaquePointer?
    private let ready = DispatchSemaphore(value: 0)
    private var startError: SesameError?

    /// Starts watching; the stream yields once per burst of changes and ends when ``stop()`` is
    /// called. Throws when libsecret's GLib lacks the functions or the session bus is absent.
    static func start(library: LibSecret) throws(SesameError) -> (SecretServiceWatcher, AsyncStream<Void>) {
        let functions = try Functions(handle: library.handle)
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))
        let watcher = SecretServiceWatcher(functions: functions, library: library, continuation: continuation)
        guard DetachedThread.start({ watcher.run() }) else {
            throw SesameError(.credentialStoreUnavailable, "no thread could be started to watch the Secret Service")
        }
        watcher.ready.wait()
        if let error = watcher.startError { throw error }
        return (watcher, stream)
    }

    private init(functions: Functions, library: LibSecret, continuation: AsyncStream<Void>.Continuation) {
        self.functions = functions
        self.library = library
        self.continuation = continuation
    }

    /// `stream`, ending the watch when its consumer stops.
    func wrap(_ stream: AsyncStream<Void>) -> AsyncStream<Void> {
        continuation.onTermination = { [self] _ in stop() }
        return stream
    }

    /// Ends the watch (the thread unsubscribes and exits) and the stream.
    func stop() {
        if let loop { functions.loopQuit(loop) }
        continuation.finish()
    }

    fileprivate func signalled() { continuation.yield() }

    private func run() {
        let context = functions.contextNew()
        functions.pushThreadDefault(context)
        var error: UnsafeMutablePointer<CSesameShims_GError>?
        let connection = library.busGet(2, nil, &error)  // G_BUS_TYPE_SESSION
        guard let connection else {
            let message = error?.pointee.message.map { String(cString: $0) } ?? "no session bus"
            if let error { library.errorFree(error) }
            startError = SesameError(.credentialStoreUnavailable, "cannot watch the Secret Service: \(message)")
            functions.popThreadDefault(context)
            functions.contextUnref(context)
            ready.signal()
            return
        }
        let subscription = functions.signalSubscribe(
            connection,
            nil,
            "org.freedesktop.Secret.Collection",
            nil,
            nil,
            nil,
            0,
            secretServiceSignalTrampoline,
            Unmanaged.passUnretained(self).toOpaque(),
            nil
        )
        let loop = functions.loopNew(context, 0)
        self.loop = loop
        ready.signal()
        // `self` stays alive for the loop: this closure's thread holds it.
        functions.loopRun(loop)
        functions.signalUnsubscribe(connection, subscription)
        functions.loopUnref(loop)
        library.objectUnref(UnsafeMutableRawPointer(connection))
        functions.popThreadDefault(context)
        functions.contextUnref(context)
    }

    /// GLib's main-loop and GDBus signal functions, found through libsecret's handle.
    private struct Functions {
        typealias Subscribe =
            @convention(c) (
                OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
                UnsafePointer<CChar>?, UnsafePointer<CChar>?, Int32, SignalCallback?, UnsafeMutableRawPointer?,
                UnsafeMutableRawPointer?
            ) -> UInt32

        let contextNew: @convention(c) () -> OpaquePointer?
        let contextUnref: @convention(c) (OpaquePointer?) -> Void
        let pushThreadDefault: @convention(c) (OpaquePointer?) -> Void
        let popThreadDefault: @convention(c) (OpaquePointer?) -> Void
        let loopNew: @convention(c) (OpaquePointer?, Int32) -> OpaquePointer?
        let loopRun: @convention(c) (OpaquePointer?) -> Void
        let loopQuit: @convention(c) (OpaquePointer?) -> Void
        let loopUnref: @convention(c) (OpaquePointer?) -> Void
        let signalSubscribe: Subscribe
        let signalUnsubscribe: @convention(c) (OpaquePointer?, UInt32) -> Void

        init(handle: UnsafeMutableRawPointer) throws(SesameError) {
            func symbol<T>(_ name: String) throws(SesameError) -> T {
                guard let address = dlsym(handle, name) else {
                    throw SesameError(
                        .credentialStoreUnavailable,
                        "GLib lacks \(name): cannot watch the Secret Service"
                    )
                }
                return unsafeBitCast(address, to: T.self)
            }
            contextNew = try symbol("g_main_context_new")
            contextUnref = try symbol("g_main_context_unref")
            pushThreadDefault = try symbol("g_main_context_push_thread_default")
            popThreadDefault = try symbol("g_main_context_pop_thread_default")
            loopNew = try symbol("g_main_loop_new")
            loopRun = try symbol("g_main_loop_run")
            loopQuit = try symbol("g_main_loop_quit")
            loopUnref = try symbol("g_main_loop_unref")
            signalSubscribe = try symbol("g_dbus_connection_signal_subscribe")
            signalUnsubscribe = try symbol("g_dbus_connection_signal_unsubscribe")
        }
    }
}

/// The signal callback: finds its watcher through user data and reports; it calls nothing of GLib.
private let secretServiceSignalTrampoline: SignalCallback = { _, _, _, _, member, _, user in
    guard let user, let member else { return }
    switch String(cString: member) {
    case "ItemCreated", "ItemDeleted", "ItemChanged":
        Unmanaged<SecretServiceWatcher>.fromOpaque(user).takeUnretainedValue().signalled()
    default:
        break
    }
}

/// `GDBusSignalCallback`.
private typealias SignalCallback =
    @convention(c) (
        OpaquePointer?, UnsafePointer<CChar>?, UnsafePointer<CChar>?, UnsafePointer<CChar>?,
        UnsafePointer<CChar>?, OpaquePointer?, UnsafeMutableRawPointer?
    ) -> Void
