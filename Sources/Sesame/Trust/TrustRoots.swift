internal import COpenSSL
internal import CSesameShims
import FoundationEssentials
import Glibc

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

    /// A store of `anchors`, with the system's roots when `addingSystem`: each certificate once,
    /// in time that grows with their number, not its square (a bundle of 10,000 anchors loads in
    /// a fraction of a second).
    convenience init(anchors: [Certificate], addingSystem: Bool, source named: String? = nil) throws {
        guard let store = X509_STORE_new() else { throw SesameError(.trustStoreUnavailable, "out of memory") }
        var source = named ?? "\(anchors.count) custom anchor(s)"
        var certificates: [Certificate] = []
        if addingSystem {
            let system = try SystemTrustStore.shared()
            let objects = X509_STORE_get0_objects(system.pointer)
            for index in 0..<CSesameShims_sk_X509_OBJECT_num(objects) {
                if let object = CSesameShims_sk_X509_OBJECT_value(objects!, index),  // safe: num > 0 implies non-nil
                    let x509 = X509_OBJECT_get0_X509(object)
                {
                    certificates.append(Certificate(box: X509Box(borrowing: x509)))
                }
            }
            source += " + \(system.source)"
        }
        certificates += anchors
        var seen = Set<Certificate>()
        let pointers = certificates.filter { seen.insert($0).inserted }.map(\.box.pointer)
        guard pointers.isEmpty || CSesameShims_X509_STORE_add_certs(store, pointers, Int32(pointers.count)) == 1 else {
            X509_STORE_free(store)
            throw SesameError(.trustStoreUnavailable, "out of memory while building the trust store")
        }
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

    /// The store `SSL_CERT_FILE` and `SSL_CERT_DIR` name (folders separated by colons), else
    /// Debian's bundle, else OpenSSL's default paths. The files are read as ``UserFile`` reads
    /// every file (regular files only, bounded), and the folders whole, once.
    static func load(environment: [String: String]) throws -> X509StoreBox {
        var sources: [String] = []
        var certificates: [Certificate] = []
        let file = environment["SSL_CERT_FILE"].flatMap { $0.isEmpty ? nil : $0 }
        let directory = environment["SSL_CERT_DIR"].flatMap { $0.isEmpty ? nil : $0 }
        if let file {
            do {
                certificates += try Certificate.certificates(
                    fileBytes: try UserFile.read(file, as: .certificates),
                    source: "SSL_CERT_FILE '\(file)'"
                )
            } catch let error as SesameError {
                throw SesameError(.trustStoreUnavailable, "SSL_CERT_FILE could not be loaded: \(error.detail)")
            }
            sources.append("'\(file)'")
        }
        if let directory {
            for path in directory.split(separator: ":").map(String.init) {
                guard let found = try? Certificate.load(contentsOfFolder: path), !found.certificates.isEmpty else {
                    continue
                }
                certificates += found.certificates
                sources.append("'\(path)'")
            }
        }
        if file == nil && directory == nil,
            let bytes = try? UserFile.readIfPresent(debianBundle, as: .certificates),
            let found = try? Certificate.certificates(fileBytes: bytes, source: debianBundle)
        {
            certificates = found
            sources.append("'\(debianBundle)'")
        }
        if sources.isEmpty, file == nil, directory == nil, let store = X509_STORE_new() {
            if X509_STORE_set_default_paths(store) == 1 {
                _ = OpenSSLErrorStack.drain()
                return X509StoreBox(takingOwnership: store, source: "OpenSSL default paths")
            }
            X509_STORE_free(store)
        }
        _ = OpenSSLErrorStack.drain()
        guard !sources.isEmpty else {
            throw SesameError(
                .trustStoreUnavailable,
                "no system trust store found (set SSL_CERT_FILE or install ca-certificates for \(debianBundle))"
            )
        }
        return try X509StoreBox(anchors: certificates, addingSystem: false, source: sources.joined(separator: " + "))
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
