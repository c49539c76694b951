internal import CSesameShims
import FoundationEssentials
import Glibc

/// One bounded libsecret call: a `GCancellable` that a timer cancels after `timeout`, and the
/// call's `GError` turned into a ``SesameError`` with its cause (locked, no provider, timed out).
struct SecretServiceCall {
    let library: LibSecret
    let timeout: Duration
    /// What the call does, for messages ("storing the credential for ...").
    let purpose: String

    /// Runs `body` with a cancellable and an error slot; throws the error it reports, or a
    /// timeout when the timer cancelled it.
    func run<Result>(
        _ body: (OpaquePointer?, LibSecret.GErrorOut) -> Result
    ) throws(SesameError) -> Result {
        let cancellable = library.cancellableNew()
        let timer = CancelTimer(library: library, cancellable: cancellable)
        timer.schedule(after: timeout)
        var error: UnsafeMutablePointer<CSesameShims_GError>?
        let result = body(cancellable, &error)
        let timedOut = timer.finish()
        library.objectUnref(UnsafeMutableRawPointer(cancellable))
        if let error {
            let failure = describe(error.pointee, timedOut: timedOut)
            library.errorFree(error)
            throw failure
        }
        if timedOut { throw timeoutError() }
        return result
    }

    private func timeoutError() -> SesameError {
        SesameError(.timeout, "the Secret Service did not answer within \(Self.seconds(timeout)) while \(purpose)")
    }

    private func describe(_ error: CSesameShims_GError, timedOut: Bool) -> SesameError {
        let message = error.message.map { String(cString: $0) } ?? "no message"
        if error.domain == library.secretErrorQuark() {
            switch error.code {
            case 2:  // SECRET_ERROR_IS_LOCKED
                return SesameError(
                    .credentialStoreLocked,
                    "the keyring is locked and was not unlocked (the prompt was dismissed or could not be shown) while \(purpose): \(message)"
                )
            case 3:  // SECRET_ERROR_NO_SUCH_OBJECT
                return SesameError(
                    .credentialStoreFailed,
                    "the Secret Service has no such keyring (no default collection, and none was created) while \(purpose): \(message)"
                )
            default:
                return SesameError(.credentialStoreFailed, "the Secret Service failed while \(purpose): \(message)")
            }
        }
        if error.domain == library.ioErrorQuark(), error.code == 19 || error.code == 24 {  // CANCELLED, TIMED_OUT
            return timedOut || error.code == 24 ? timeoutError() : SesameError(.cancelled, "\(purpose) was cancelled")
        }
        if error.domain == library.dbusErrorQuark() {
            switch error.code {
            case 2, 3, 11, 23...34:  // SERVICE_UNKNOWN, NAME_HAS_NO_OWNER, NO_SERVER, SPAWN_*
                return SesameError(
                    .credentialStoreUnavailable,
                    "no Secret Service provider (GNOME Keyring, KeePassXC) answers on the session bus: \(message)"
                )
            case 4, 12, 20:  // NO_REPLY, TIMEOUT, TIMED_OUT
                return timeoutError()
            default:
                break
            }
        }
        return SesameError(.credentialStoreFailed, "the Secret Service failed while \(purpose): \(message)")
    }

    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        return milliseconds % 1000 == 0 ? "\(milliseconds / 1000) s" : "\(milliseconds) ms"
    }
}

/// Cancels a `GCancellable` when the deadline passes, unless the call finished first.
///
/// The deadline is a timer on Sesame's event loop, a thread of its own: a dispatch timer runs on
/// the threads Swift concurrency runs tasks on, and with those all held by calls waiting for a
/// Secret Service that does not answer, it would never fire. The timer holds this object, and
/// with it a reference to the cancellable, until it fires or the call finishes.
private final class CancelTimer: @unchecked Sendable {
    // @unchecked: `state` and `timer` are guarded by their locks; the pointers are immutable.
    private enum State { case running, fired, finished }
    private let library: LibSecret
    private let cancellable: OpaquePointer?
    private let state = LockedValue(State.running)
    private let timer = LockedValue<LoopTimer?>(nil)

    init(library: LibSecret, cancellable: OpaquePointer?) {
        self.library = library
        self.cancellable = cancellable
        _ = library.objectRef(UnsafeMutableRawPointer(cancellable))
    }

    deinit { library.objectUnref(UnsafeMutableRawPointer(cancellable)) }

    func schedule(after timeout: Duration) {
        let deadline = LoopTimer(on: .shared, at: .now + timeout) { [self] in
            let fire = state.withLock { state -> Bool in
                guard state == .running else { return false }
                state = .fired
                return true
            }
            if fire { library.cancellableCancel(cancellable) }
        }
        timer.withLock { $0 = deadline }
    }

    /// Marks the call finished and stops the timer; true when the timer had already cancelled it.
    func finish() -> Bool {
        let fired = state.withLock { state in
            defer { if state == .running { state = .finished } }
            return state == .fired
        }
        timer.withLock { timer in
            timer?.cancel()
            timer = nil
        }
        return fired
    }
}

/// A `GHashTable` of strings (libsecret's attributes), owned here and freed once.
struct SecretAttributeTable: ~Copyable {
    let library: LibSecret
    let table: OpaquePointer?

    init(_ attributes: [String: String], library: LibSecret) {
        self.library = library
        // Keys and values are strdup'd copies freed by the table (g_free is free for malloc'd memory).
        let free = unsafeBitCast(library.free, to: UnsafeMutableRawPointer.self)
        table = library.hashTableNewFull(library.strHash, library.strEqual, free, free)
        for (key, value) in attributes {
            _ = library.hashTableInsert(table, strdup(key), strdup(value))
        }
    }

    deinit { library.hashTableUnref(table) }

    /// The strings of a table libsecret returned (borrowed; the caller unrefs it).
    static func read(_ table: OpaquePointer?, library: LibSecret) -> [String: String] {
        guard let table else { return [:] }
        var result: [String: String] = [:]
        let keys = library.hashTableGetKeys(table)
        var node = keys
        while let current = node {
            if let key = current.pointee.data, let value = library.hashTableLookup(table, key) {
                result[String(cString: key.assumingMemoryBound(to: CChar.self))] = String(
                    cString: value.assumingMemoryBound(to: CChar.self)
                )
            }
            node = current.pointee.next
        }
        library.listFree(keys)
        return result
    }
}
