import Foundation
import Sesame

/// A loader for requests the network should not see (`URLProtocol`): apps subclass it to answer
/// requests themselves, most often to stub the network in their tests.
///
/// SesameNetworking's own class (it shadows FoundationNetworking's), so that ``task`` is the
/// session's task and a session runs the protocols its configuration names. A session asks the
/// classes of its configuration's `protocolClasses` in order, and ``URLSession/shared`` first asks
/// the classes given to ``registerClass(_:)`` (the latest first), as on Apple's platforms; the
/// first whose `canInit(with:)` answers true loads the request, else the network does.
open class URLProtocol: NSObject {
    // Not Sendable, as Apple's and FoundationNetworking's: subclasses need not declare it.
    private let original: URLRequest
    private let cached: CachedURLResponse?
    /// Where the protocol reports what it loaded.
    open var client: (any URLProtocolClient)?
    /// The task the protocol loads for (nil when it was made from a request alone).
    open internal(set) var task: URLSessionTask?

    /// A protocol loading `request` and reporting to `client`; `cachedResponse` is always nil
    /// (SesameNetworking keeps no response cache).
    public required init(request: URLRequest, cachedResponse: CachedURLResponse?, client: (any URLProtocolClient)?) {
        original = request
        cached = cachedResponse
        self.client = client
    }

    /// A protocol loading `task`'s current request for the task and reporting to `client`.
    public required convenience init(
        task: URLSessionTask,
        cachedResponse: CachedURLResponse?,
        client: (any URLProtocolClient)?
    ) {
        // safe: a task is always made from a request.
        self.init(request: task.currentRequest ?? task.originalRequest!, cachedResponse: cachedResponse, client: client)
        self.task = task
    }

    /// The request being loaded.
    open var request: URLRequest { original }
    /// The cached response given at creation: always nil (SesameNetworking keeps no response
    /// cache).
    open var cachedResponse: CachedURLResponse? { cached }

    /// Whether this class loads `request` (none does unless a subclass says so).
    open class func canInit(with request: URLRequest) -> Bool { false }

    /// Whether this class loads `task`'s current request (what the loading system asks).
    open class func canInit(with task: URLSessionTask) -> Bool {
        guard let request = task.currentRequest ?? task.originalRequest else { return false }
        return canInit(with: request)
    }

    /// The form of `request` this class loads (the request itself unless a subclass says otherwise).
    open class func canonicalRequest(for request: URLRequest) -> URLRequest { request }

    /// Whether `a` and `b` have equal canonical requests.
    open class func requestIsCacheEquivalent(_ a: URLRequest, to b: URLRequest) -> Bool {
        canonicalRequest(for: a) == canonicalRequest(for: b)
    }

    /// Loads ``request``, telling ``client`` what arrives. Subclasses override it; this class
    /// loads nothing and fails with `URLError.unsupportedURL`.
    open func startLoading() {
        client?.urlProtocol(self, didFailWithError: URLError(.unsupportedURL))
    }

    /// Stops loading (the task was cancelled or redirected elsewhere).
    open func stopLoading() {}

    // MARK: - Request properties (kept in the request, as FoundationNetworking keeps them)

    /// The value stored in `request` for `key` by ``setProperty(_:forKey:in:)``, if any.
    open class func property(forKey key: String, in request: URLRequest) -> Any? {
        FoundationNetworking.URLProtocol.property(forKey: key, in: request)
    }

    /// Stores `value` for `key` in `request`, where it travels with the request (a protocol marks
    /// requests it has seen this way).
    open class func setProperty(_ value: Any, forKey key: String, in request: NSMutableURLRequest) {
        FoundationNetworking.URLProtocol.setProperty(value, forKey: key, in: request)
    }

    /// Removes the value for `key` from `request`.
    open class func removeProperty(forKey key: String, in request: NSMutableURLRequest) {
        FoundationNetworking.URLProtocol.removeProperty(forKey: key, in: request)
    }

    // MARK: - Registration

    private static let registered = LockedValue<[URLProtocol.Type]>([])

    /// Makes `protocolClass` visible to ``URLSession/shared``, asked before the classes
    /// registered earlier. Unlike Apple's, `NSURLConnection` does not ask registered classes.
    /// - Returns: false when `protocolClass` is not a subclass of `URLProtocol`.
    @discardableResult
    open class func registerClass(_ protocolClass: AnyClass) -> Bool {
        guard let type = protocolClass as? URLProtocol.Type else { return false }
        registered.withLock { classes in
            classes.removeAll { $0 == type }
            classes.insert(type, at: 0)
        }
        return true
    }

    /// Stops asking `protocolClass`.
    open class func unregisterClass(_ protocolClass: AnyClass) {
        registered.withLock { classes in classes.removeAll { $0 == protocolClass } }
    }

    /// The registered classes, the latest first.
    static var registeredClasses: [URLProtocol.Type] { registered.withLock { $0 } }
}

/// What a ``URLProtocol`` tells the loading system (`URLProtocolClient`).
public protocol URLProtocolClient: NSObjectProtocol, Sendable {
    /// The load was redirected to `request`: the task asks its delegates and loads the new request.
    func urlProtocol(_ protocol: URLProtocol, wasRedirectedTo request: URLRequest, redirectResponse: URLResponse)
    /// Never called: SesameNetworking keeps no response cache.
    func urlProtocol(_ protocol: URLProtocol, cachedResponseIsValid cachedResponse: CachedURLResponse)
    /// The response head arrived; `policy` is accepted and ignored (there is no cache).
    func urlProtocol(
        _ protocol: URLProtocol,
        didReceive response: URLResponse,
        cacheStoragePolicy policy: URLCache.StoragePolicy
    )
    /// A piece of the body arrived.
    func urlProtocol(_ protocol: URLProtocol, didLoad data: Data)
    /// The load finished.
    func urlProtocolDidFinishLoading(_ protocol: URLProtocol)
    /// The load failed with `error`.
    func urlProtocol(_ protocol: URLProtocol, didFailWithError error: any Error)
    /// A challenge for the task's delegates; they answer through `challenge.sender`.
    func urlProtocol(_ protocol: URLProtocol, didReceive challenge: URLAuthenticationChallenge)
    /// The challenge was withdrawn: no answer is expected any more.
    func urlProtocol(_ protocol: URLProtocol, didCancel challenge: URLAuthenticationChallenge)
}
