internal import COpenSSL
internal import CSesameShims
import Foundation

/// The certificates a chain must lead to (the anchors).
///
/// ``system`` is the operating system's bundle: the file named by `SSL_CERT_FILE`, the hashed
/// directory named by `SSL_CERT_DIR`, else Debian's `/etc/ssl/certs/ca-certificates.crt`. It is
/// loaded once per process and shared by every connection (loading it per connection is what makes
/// curl pay ~40 ms a handshake here).
public struct TrustRoots: Hashable, Sendable, CustomStringConvertible {
    /// Whether the system bundle is included.
    public let includesSystemRoots: Bool
    /// Anchors beyond (or instead of) the system bundle.
    public let customAnchors: [Certificate]

    /// The system bundle.
    public static let system = TrustRoots(includesSystemRoots: true, customAnchors: [])

    /// Only these anchors, like `SecTrustSetAnchorCertificates` + `SecTrustSetAnchorCertificatesOnly(true)`.
    ///
    /// An anchor need not be self-signed: a chain that reaches any anchor is trusted.
    public static func anchors(_ certificates: [Certificate]) -> TrustRoots {
        TrustRoots(includesSystemRoots: false, customAnchors: certificates)
    }

    /// The system bundle plus these anchors, like `SecTrustSetAnchorCertificatesOnly(false)`.
    public static func system(adding certificates: [Certificate]) -> TrustRoots {
        TrustRoots(includesSystemRoots: true, customAnchors: certificates)
    }

    public var description: String {
        switch (includesSystemRoots, customAnchors.count) {
        case (true, 0): return "system roots"
        case (false, let count): return "\(count) custom anchor(s) only"
        case (true, let count): return "system roots + \(count) custom anchor(s)"
        }
    }

    /// The OpenSSL store for these roots, built once per distinct value and shared.
    func store() throws -> X509StoreBox {
        if includesSystemRoots && customAnchors.isEmpty { return try SystemTrustStore.shared() }
        return try TrustStoreCache.shared.store(for: self) {
            try X509StoreBox(anchors: customAnchors, addingSystem: includesSystemRoots)
        }
    }

    /// Whether chains may end at an anchor that is not self-signed (any custom anchor is trusted as is).
    var allowsPartialChains: Bool { !customAnchors.isEmpty }
}

/// Owns an `X509_STORE`. OpenSSL stores are internally locked and safe to share once filled.
final class X509StoreBox: @unchecked Sendable {
    let pointer: OpaquePointer
    /// Where the certificates came from, for error messages.
    let source: String

    init(takingOwnership pointer: OpaquePointer, source: String) {
        self.pointer = pointer
        self.source = source
    }

    convenience init(anchors: [Certificate], addingSystem: Bool) throws {
        guard let store = X509_STORE_new() else { throw SesameError(.trustStoreUnavailable, "out of memory") }
        var source = "\(anchors.count) custom anchor(s)"
        if addingSystem {
            let system = try SystemTrustStore.shared()
            let objects = X509_STORE_get0_objects(system.pointer)
            for index in 0..<CSesameShims_sk_X509_OBJECT_num(objects) {
                if let object = CSesameShims_sk_X509_OBJECT_value(objects!, index),  // safe: num > 0 implies non-nil
                    let x509 = X509_OBJECT_get0_X509(object)
                {
                    X509_STORE_add_cert(store, x509)
                }
            }
            source += " + \(system.source)"
        }
        for anchor in anchors { X509_STORE_add_cert(store, anchor.box.pointer) }
        ERR_clear_error()  // duplicates are reported as errors; they are harmless
        self.init(takingOwnership: store, source: source)
    }

    deinit { X509_STORE_free(pointer) }
}

/// The process-wide system trust store, loaded on first use.
enum SystemTrustStore {
    static let debianBundle = "/etc/ssl/certs/ca-certificates.crt"
    private static let loaded = LockedValue<Result<X509StoreBox, SesameError>?>(nil)

    static func shared() throws -> X509StoreBox {
        try loaded.withLock { cached in
            if let cached { return try cached.get() }
            let result: Result<X509StoreBox, SesameError>
            do {
                result = .success(try load(environment: ProcessInfo.processInfo.environment))
            } catch let error as SesameError {
                result = .failure(error)
            } catch {
                result = .failure(SesameError(.trustStoreUnavailable, "\(error)"))
            }
            cached = result
            return try result.get()
        }
    }

    static func load(environment: [String: String]) throws -> X509StoreBox {
        guard let store = X509_STORE_new() else { throw SesameError(.trustStoreUnavailable, "out of memory") }
        var sources: [String] = []
        let file = environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        let directory = environment["SSL_CERT_DIR"].flatMap { $0.isEmpty ? nil : $0 }
        OpenSSLErrorStack.clear()
        if let file {
            guard X509_STORE_load_file(store, file) == 1 else {
                X509_STORE_free(store)
                throw SesameError(
                    .trustStoreUnavailable,
                    "SSL_CERT_FILE '\(file)' could not be loaded (\(OpenSSLErrorStack.drain()))"
                )
            }
            sources.append("'\(file)'")
        }
        if let directory {
            for path in directory.split(separator: ":") where X509_STORE_load_path(store, String(path)) == 1 {
                sources.append("'\(path)'")
            }
        }
        if file == nil && directory == nil {
            if X509_STORE_load_file(store, debianBundle) == 1 {
                sources.append("'\(debianBundle)'")
            } else if X509_STORE_set_default_paths(store) == 1 {
                sources.append("OpenSSL default paths")
            }
        }
        _ = OpenSSLErrorStack.drain()
        guard !sources.isEmpty else {
            X509_STORE_free(store)
            throw SesameError(
                .trustStoreUnavailable,
                "no system trust store found (set SSL_CERT_FILE or install ca-certificates for \(debianBundle))"
            )
        }
        return X509StoreBox(takingOwnership: store, source: sources.joined(separator: " + "))
    }
}

/// Stores built for custom anchors, kept so each distinct set is built once.
final class TrustStoreCache: Sendable {
    static let shared = TrustStoreCache()
    private let stores = LockedValue<[TrustRoots: X509StoreBox]>([:])
    private let limit = 64

    func store(for roots: TrustRoots, build: () throws -> X509StoreBox) throws -> X509StoreBox {
        if let existing = stores.withLock({ $0[roots] }) { return existing }
        let built = try build()
        return stores.withLock { stores in
            if let existing = stores[roots] { return existing }
            if stores.count >= limit { stores.removeAll() }
            stores[roots] = built
            return built
        }
    }
}
