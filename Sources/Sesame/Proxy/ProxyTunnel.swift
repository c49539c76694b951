import FoundationEssentials
import Glibc

/// The `CONNECT` exchange (RFC 9110 9.3.6) on a connection to a proxy.
enum ProxyTunnel {
    /// Sends `CONNECT authority` and reads the proxy's response head. Returns the head, any bytes
    /// read past it (the tunnel's first bytes after a 2xx), and for a refusal whether the
    /// connection may carry the next `CONNECT` (its body was read, at most 64 KiB, and the proxy
    /// keeps the connection): NTLM's three messages must share one. Only `Host`, `User-Agent` and
    /// `Proxy-Authorization` are sent: nothing meant for the origin ever goes to the proxy.
    /// - Throws: ``SesameError/Code/proxyConnectFailed`` when the proxy closes without an answer
    ///   or does not answer in HTTP; ``SesameError/Code/timeout`` after `timeout` of silence.
    static func connect(
        _ connection: Connection,
        authority: String,
        proxy: ProxyEndpoint,
        proxyAuthorization: String?,
        userAgent: String?,
        timeout: Duration,
        observer: (@Sendable (SessionEvent) -> Void)?
    ) async throws -> (response: HTTPResponse, leftover: [UInt8], reusable: Bool) {
        var headers = HTTPHeaders()
        headers.add(name: "Host", value: authority)
        if let userAgent { headers.add(name: "User-Agent", value: userAgent) }
        if let proxyAuthorization { headers.add(name: "Proxy-Authorization", value: proxyAuthorization) }
        let head = try HTTP1RequestEncoder.head(method: "CONNECT", target: authority, headers: headers)
        observer?(.requestHeadSent(String(decoding: head.dropLast(4), as: UTF8.self)))
        var parser = HTTP1ResponseParser(requestMethod: "CONNECT")
        var final: HTTP1ResponseHead?
        var reusable: Bool?
        var bodyBytes = 0
        var bytes = try await connection.writeThenRead(head, timeout: timeout)
        // Up to the head; for a refusal, up to the end of its body too (bounded).
        while final == nil || (reusable == nil && !(200..<300).contains(final?.status ?? 0)) {
            let events: [HTTP1ResponseParser.Event]
            do {
                events = bytes.isEmpty ? try parser.endOfInput() : try parser.feed(bytes)
            } catch let error as SesameError {
                throw SesameError(
                    .proxyConnectFailed,
                    "\(proxy) did not answer CONNECT \(authority) in HTTP: \(error.detail)"
                )
            }
            for event in events {
                switch event {
                case .informational(let head):
                    observer?(.responseHeadReceived(describe(head)))
                case .head(let head):
                    observer?(.responseHeadReceived(describe(head)))
                    final = head
                case .body(let chunk):
                    bodyBytes += chunk.count
                case .end(_, let keeps):
                    reusable = keeps
                }
            }
            if final != nil, bodyBytes > 65_536 { reusable = false }
            if final == nil || (reusable == nil && !(200..<300).contains(final?.status ?? 0)) {
                if bytes.isEmpty {
                    guard final != nil else {
                        throw SesameError(
                            .proxyConnectFailed,
                            "\(proxy) closed the connection without answering CONNECT"
                        )
                    }
                    reusable = false
                    break
                }
                bytes = try await connection.read(timeout: timeout)
            }
        }
        guard let final else { throw SesameError(.proxyConnectFailed, "no response to CONNECT") }
        observer?(.tunnel(proxy: proxy.description, target: authority, status: final.status))
        let leftover = (200..<300).contains(final.status) ? parser.takeUnparsedBytes() : []
        let url = URL(string: "https://\(authority)/") ?? URL(fileURLWithPath: "/")
        let response = HTTPResponse(
            status: final.status,
            reason: final.reason,
            version: "HTTP/1.\(final.minorVersion)",
            headers: final.headers,
            url: url
        )
        return (response, leftover, reusable ?? false)
    }

    private static func describe(_ head: HTTP1ResponseHead) -> String {
        var lines = ["HTTP/1.\(head.minorVersion) \(head.status) \(head.reason)"]
        for field in head.headers { lines.append("\(field.name): \(field.value)") }
        return lines.joined(separator: "\r\n")
    }
}
