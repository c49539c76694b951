import Dispatch
import FoundationEssentials
import Glibc
import Sesame

/// `-E/--cert`, `--cert-type`, `--key`, `--pass` (a client identity) and `-x`, `-U`,
/// `--proxy-basic|digest|anyauth`, `--noproxy` (the proxy) for a fetch, with curl's meanings.
enum FetchConnectionOptions {
    /// A problem with the client certificate or key files (exit code 5).
    struct IdentityError: Error, CustomStringConvertible {
        let description: String
    }

    /// curl's `-E FILE[:PASSWORD]` (a `\:` in the file name is a colon), `--cert-type` (default:
    /// P12 for `.p12`/`.pfx` files, else PEM), `--key` (default: the certificate file) and `--pass`.
    static func identity(_ options: FetchOptions) throws -> Identity? {
        guard let argument = options.clientCertificate else { return nil }
        let (file, inlinePassword) = splitCertificateArgument(argument)
        let password = inlinePassword ?? options.keyPassword
        let lowered = file.lowercased()
        let type = options.certificateType ?? (lowered.hasSuffix(".p12") || lowered.hasSuffix(".pfx") ? "P12" : "PEM")
        do {
            if type == "P12" {
                return try Identity.load(pkcs12File: file, password: password ?? "")
            }
            return try Identity.load(certificateFile: file, keyFile: options.keyFile ?? file, password: password)
        } catch let error as SesameError {
            var hint = ""
            if type == "PEM", error.code == .invalidCertificate, let bytes = try? UserFile.read(file, as: .pkcs12),
                bytes.first != UInt8(ascii: "-")
            {
                hint = " (is it PKCS#12? add --cert-type P12)"
            }
            throw IdentityError(description: "client certificate: \(error)\(hint)")
        }
    }

    /// ``identity(_:)`` within `limit` (curl's `-m`, which counts everything the transfer does):
    /// the file is read and decrypted on a thread of its own, and a load still going at the
    /// deadline fails the fetch (the thread ends with the process).
    static func identity(_ options: FetchOptions, within limit: Duration?) async throws -> Identity? {
        guard options.clientCertificate != nil else { return nil }
        guard let limit else { return try identity(options) }
        let outcome = LockedValue<Result<Identity?, any Error>?>(nil)
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Identity?, any Error>) in
            let finish: @Sendable (Result<Identity?, any Error>) -> Void = { result in
                let first = outcome.withLock { stored -> Bool in
                    guard stored == nil else { return false }
                    stored = result
                    return true
                }
                if first { continuation.resume(with: result) }
            }
            if !DetachedThread.start({ finish(Result { try identity(options) }) }) {
                finish(.failure(IdentityError(description: "client certificate: no thread to load it on")))
            }
            let milliseconds = Int(
                limit.components.seconds * 1000 + limit.components.attoseconds / 1_000_000_000_000_000
            )
            DispatchQueue.global().asyncAfter(deadline: .now() + .milliseconds(milliseconds)) {
                finish(
                    .failure(IdentityError(description: "client certificate: still loading when -m's \(limit) ran out"))
                )
            }
        }
    }

    static func splitCertificateArgument(_ argument: String) -> (file: String, password: String?) {
        var file = ""
        var index = argument.startIndex
        while index < argument.endIndex {
            let character = argument[index]
            let next = argument.index(after: index)
            if character == "\\", next < argument.endIndex, argument[next] == ":" {
                file.append(":")
                index = argument.index(after: next)
                continue
            }
            if character == ":" { return (file, String(argument[next...])) }
            file.append(character)
            index = next
        }
        return (file, nil)
    }

    /// The proxies (`-x` over the environment's, `--noproxy`, `-U` written into the proxy URLs)
    /// and the schemes answered for them.
    static func proxy(
        _ options: FetchOptions,
        from environment: ProxyConfiguration = SessionConfiguration.default.proxy
    ) throws -> (ProxyConfiguration, Set<AuthenticationMethod>?) {
        var proxy = environment
        if let given = options.proxy { proxy = given.isEmpty ? .none : ProxyConfiguration(proxy: given) }
        if let list = options.noProxy { proxy.noProxy = NoProxyList(list) }
        guard let proxyUser = options.proxyUser, !proxyUser.isTicketCache else { return (proxy, options.proxyMethods) }
        guard proxy.httpProxy != nil || proxy.httpsProxy != nil else {
            Output.error("warning: -U was given but no proxy is set (-x or the environment)")
            return (proxy, options.proxyMethods)
        }
        let password = try proxyUser.resolvedPassword()
        proxy.httpProxy = try proxy.httpProxy.map { try withUserInfo($0, user: proxyUser.user, password: password) }
        proxy.httpsProxy = try proxy.httpsProxy.map { try withUserInfo($0, user: proxyUser.user, password: password) }
        return (proxy, options.proxyMethods)
    }

    /// `text` percent-encoded for a URL's user or password: RFC 3986's unreserved characters and
    /// sub-delimiters stay, everything else (":", "@", "/" and "%" among them) is escaped.
    private static func userInfoEncoded(_ text: String) -> String {
        let kept = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&'()*+,;=".utf8)
        var result = ""
        for byte in text.utf8 {
            if kept.contains(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result +=
                    "%" + String(byte >> 4, radix: 16, uppercase: true)
                    + String(byte & 0x0F, radix: 16, uppercase: true)
            }
        }
        return result
    }

    /// The proxy URL with `user:password` in it (the session sends them to that proxy only).
    private static func withUserInfo(_ proxy: String, user: String, password: String) throws -> String {
        let text = proxy.contains("://") ? proxy : "http://" + proxy
        guard var components = URLComponents(string: text) else {
            throw Arguments.UsageError(description: "'\(proxy)' is not a proxy URL")
        }
        components.percentEncodedUser = userInfoEncoded(user)
        components.percentEncodedPassword = userInfoEncoded(password)
        guard let string = components.string else {
            throw Arguments.UsageError(description: "'\(proxy)' is not a proxy URL")
        }
        return string
    }
}
