import FoundationEssentials
import Glibc

/// The `rspauth` check of an `auth-int` response, which covers the response body: the body is
/// hashed as it streams past, and checked at its end.
final class DigestBodyCheck {
    let authorizer: DigestAuthorizer
    let info: String
    let expectation: DigestAuthorizer.Expectation
    private var hasher: IncrementalHash

    init(authorizer: DigestAuthorizer, info: String, expectation: DigestAuthorizer.Expectation) {
        self.authorizer = authorizer
        self.info = info
        self.expectation = expectation
        hasher = IncrementalHash(authorizer.algorithm.hash)
    }

    func update(_ bytes: [UInt8]) { hasher.update(bytes) }

    func verify() throws {
        try authorizer.verify(info, expectation: expectation, responseBodyHash: hasher.finalizeHex())
    }
}

/// A copyable wrapper of ``DigestHasher`` for use in a class.
struct IncrementalHash {
    private let box: Box

    private final class Box {
        var hasher: DigestHasher?
        init(_ hash: DigestAlgorithm.Hash) { hasher = DigestHasher(hash) }
    }

    init(_ hash: DigestAlgorithm.Hash) { box = Box(hash) }

    mutating func update(_ bytes: [UInt8]) { box.hasher?.update(bytes) }

    func finalizeHex() -> String { box.hasher.take()?.finalizeHex() ?? "" }
}

extension HTTPBody {
    /// Whether the body can be hashed before it is sent (Digest `auth-int`): bytes and files can,
    /// a stream cannot.
    var isHashable: Bool {
        if case .stream = self { return false }
        return true
    }

    /// The hex hash of the body's bytes (a file is read in pieces).
    func hexHash(_ hash: DigestAlgorithm.Hash) throws -> String {
        var hasher = DigestHasher(hash)
        try update(&hasher)
        return hasher.finalizeHex()
    }

    private func update(_ hasher: inout DigestHasher) throws {
        switch self {
        case .segments(let segments):
            for segment in segments {
                switch segment {
                case .data(let data): try HTTPBody.data(data).update(&hasher)
                case .file(let url): try HTTPBody.file(url).update(&hasher)
                }
            }
        case .data(let data):
            hasher.update([UInt8](data))
        case .file(let url):
            let fd = open(url.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw SesameError(.fileUnreadable, "'\(url.path)': \(errnoText())") }
            defer { close(fd) }
            var chunk = [UInt8](repeating: 0, count: 1 << 16)
            while true {
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if count == 0 { break }
                guard count > 0 else { throw SesameError(.fileUnreadable, "'\(url.path)': \(errnoText())") }
                hasher.update(Array(chunk[0..<count]))
            }
        case .stream:
            throw SesameError(.unsupportedCredential, "a streamed body cannot be hashed for Digest auth-int")
        }
    }
}

extension ChallengeResolver.Authorizer {
    /// The header value for `request`, and for Digest what the response's `rspauth` must be.
    /// The header value for `request`; `uri` is Digest's request-target when it is not the
    /// origin form (absolute form to a forwarding proxy, `host:port` for `CONNECT`).
    func header(for request: HTTPRequest, uri: String? = nil) throws -> (String, DigestAuthorizer.Expectation?) {
        switch self {
        case .fixed(let value):
            return (value, nil)
        case .digest(let digest):
            let (value, expectation) = try digest.authorization(
                method: request.method,
                uri: uri ?? RequestHead.target(of: request.url),
                bodyHash: { try request.body?.hexHash(digest.algorithm.hash) ?? digest.algorithm.hex([UInt8]()) }
            )
            return (value, expectation)
        case .exchange(let exchange):
            let token = exchange.token
            guard !token.isEmpty else {
                throw SesameError(.internalError, "\(exchange.summary) has no token to send")
            }
            return (exchange.scheme + " " + Data(token).base64EncodedString(), nil)
        }
    }
}
