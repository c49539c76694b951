/// How a request reaches its origin.
enum ProxyRoute: Hashable, Sendable {
    /// Straight to the origin.
    case direct
    /// Through a forwarding proxy that receives the request in absolute form (`http://` URLs).
    case forward(ProxyEndpoint)
    /// Through a `CONNECT` tunnel, with TLS to the origin inside it (`https://` URLs).
    case tunnel(ProxyEndpoint)

    var proxy: ProxyEndpoint? {
        switch self {
        case .direct: nil
        case .forward(let proxy), .tunnel(let proxy): proxy
        }
    }
}
