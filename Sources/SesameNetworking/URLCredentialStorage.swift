import Foundation
import Sesame

extension NSNotification.Name {
    /// Posted on `NotificationCenter.default` when a storage's credentials change (object: the
    /// `URLCredentialStorage`), as seed 001 describes; Apple's current platforms no longer post it.
    public static let NSURLCredentialStorageChanged = NSNotification.Name("NSURLCredentialStorageChangedNotification")
}

/// The option key of `remove(_:for:options:)` that also removes synchronizable credentials.
/// Accepted: on Linux nothing is synchronized, so it changes nothing.
public let NSURLCredentialStorageRemoveSynchronizableCredentials =
    "NSURLCredentialStorageRemoveSynchronizableCredentials"

/// Where credentials are kept between challenges (`URLCredentialStorage`), over Sesame's
/// `CredentialStorage`: `.permanent` credentials go to its file (Apple's keychain), so a later
/// process finds them with no delegate.
///
/// Apple's methods do not throw. When the store cannot be read or written (a corrupt file is
/// named and left alone), reads find nothing, writes change nothing, and the reason is written to
/// standard error once per failure.
open class URLCredentialStorage: NSObject, @unchecked Sendable {
    // @unchecked: `storage` is Sendable; the observation is set once in init.
    let storage: CredentialStorage
    private var observation: CredentialStorage.ChangeObservation?
    /// The threads inside one of this storage's changing calls, and whether their call changed
    /// anything: such a call posts one notification when it returns, however many changes it made.
    private let callers = LockedValue<[UInt: Bool]>([:])

    /// The process-wide storage (Sesame's `CredentialStorage.shared`).
    public static let shared = URLCredentialStorage(CredentialStorage.shared)

    public override convenience init() { self.init(CredentialStorage()) }

    /// A storage over Sesame's (for tests and for a store file of your own).
    /// A storage over Sesame's (for tests and for a store file of your own).
    /// `NSURLCredentialStorageChanged` is posted as Foundation posts it: inside the call that
    /// changed the storage, on the caller's thread (storing an equal credential again posts
    /// nothing); another process's change to the keyring is posted when the keyring signals it.
    public init(_ storage: CredentialStorage) {
        self.storage = storage
        super.init()
        let poster = WeakStorage(self)
        observation = storage.observeChanges { _ in
            guard let storage = poster.storage else { return }
            let thread = UInt(pthread_self())
            let duringCall = storage.callers.withLock { callers -> Bool in
                guard callers[thread] != nil else { return false }
                callers[thread] = true
                return true
            }
            if !duringCall { storage.postChanged() }
        }
    }

    deinit { observation?.cancel() }

    /// The credentials stored for `space`, by user name; nil when there is none.
    public func credentials(for space: URLProtectionSpace) -> [String: URLCredential]? {
        let found = attempt { try storage.credentials(for: space.space) } ?? [:]
        return found.isEmpty ? nil : found.mapValues(URLCredential.init)
    }

    /// Every stored credential, by protection space and user name.
    public var allCredentials: [URLProtectionSpace: [String: URLCredential]] {
        let all = attempt { try storage.allCredentials } ?? [:]
        var result: [URLProtectionSpace: [String: URLCredential]] = [:]
        for (space, credentials) in all {
            result[URLProtectionSpace(space)] = credentials.mapValues(URLCredential.init)
        }
        return result
    }

    /// Stores the credential; it becomes the space's default when the space has none yet, as
    /// Foundation's does.
    public func set(_ credential: URLCredential, for space: URLProtectionSpace) {
        changing {
            if try storage.designatedDefaultCredential(for: space.space) == nil {
                try storage.setDefaultCredential(credential.sesame, for: space.space)
            } else {
                try storage.set(credential.sesame, for: space.space)
            }
        }
    }

    /// Removes `credential` from `space`, from memory and, for a `.permanent` one, from the store.
    public func remove(_ credential: URLCredential, for space: URLProtectionSpace) {
        changing { try storage.remove(credential.sesame, for: space.space) }
    }

    /// Removes `credential` from `space`; `options` are accepted and ignored (nothing is
    /// synchronized on Linux).
    public func remove(_ credential: URLCredential, for space: URLProtectionSpace, options: [String: Any]? = nil) {
        remove(credential, for: space)
    }

    /// The credential set as the space's default, if one was (Foundation's rule: a space's
    /// only credential is not its default unless it was made so).
    public func defaultCredential(for space: URLProtectionSpace) -> URLCredential? {
        attempt { try storage.designatedDefaultCredential(for: space.space) }?.map(URLCredential.init)
    }

    /// Stores `credential` for `space` and makes it the space's default.
    public func setDefaultCredential(_ credential: URLCredential, for space: URLProtectionSpace) {
        changing { try storage.setDefaultCredential(credential.sesame, for: space.space) }
    }

    // The task forms.
    /// Hands the credentials stored for `space` to `completionHandler`, before returning.
    public func getCredentials(
        for space: URLProtectionSpace,
        task: URLSessionTask,
        completionHandler: ([String: URLCredential]?) -> Void
    ) { completionHandler(credentials(for: space)) }

    /// Stores `credential` for `space`; the task changes nothing.
    public func set(_ credential: URLCredential, for space: URLProtectionSpace, task: URLSessionTask) {
        set(credential, for: space)
    }

    /// Removes `credential` from `space`; the task and `options` change nothing.
    public func remove(
        _ credential: URLCredential,
        for space: URLProtectionSpace,
        options: [String: Any]? = nil,
        task: URLSessionTask
    ) { remove(credential, for: space) }

    /// Hands the default credential of `space` to `completionHandler`, before returning.
    public func getDefaultCredential(
        for space: URLProtectionSpace,
        task: URLSessionTask,
        completionHandler: (URLCredential?) -> Void
    ) { completionHandler(defaultCredential(for: space)) }

    /// Stores `credential` as the default of `space`; the task changes nothing.
    public func setDefaultCredential(_ credential: URLCredential, for space: URLProtectionSpace, task: URLSessionTask) {
        setDefaultCredential(credential, for: space)
    }

    /// The storage, without keeping it alive (the observation it owns refers to it).
    private final class WeakStorage: @unchecked Sendable {
        // @unchecked: a weak reference, read only.
        weak var storage: URLCredentialStorage?
        init(_ storage: URLCredentialStorage) { self.storage = storage }
    }

    /// Runs a changing call; posts `NSURLCredentialStorageChanged` once, before returning, when
    /// it changed anything.
    private func changing(_ body: () throws -> Void) {
        let thread = UInt(pthread_self())
        callers.withLock { $0[thread] = false }
        attempt(body)
        let changed = callers.withLock { $0.removeValue(forKey: thread) ?? false }
        if changed { postChanged() }
    }

    private func postChanged() {
        NotificationCenter.default.post(name: .NSURLCredentialStorageChanged, object: self)
    }

    @discardableResult
    private func attempt<T>(_ body: () throws -> T) -> T? {
        do {
            return try body()
        } catch {
            FileHandle.standardError.write(Data("URLCredentialStorage: \(error)\n".utf8))
            return nil
        }
    }
}
