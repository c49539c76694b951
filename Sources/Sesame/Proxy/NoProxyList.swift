import FoundationEssentials
import Glibc

/// curl's `no_proxy` list: hosts that are reached directly.
///
/// Comma-separated entries: `*` alone matches every host; a name matches itself and its
/// subdomains (`example.com` and `.example.com` both match `www.example.com`, never
/// `badexample.com`); an IP address matches itself; `address/bits` matches a CIDR range (IPv4 or
/// IPv6). Comparison ignores case and a trailing dot; IPv6 entries may be bracketed; a `:port`
/// after a name or bracketed address is ignored, as curl does.
public struct NoProxyList: Hashable, Sendable {
    /// The entries as given (empty ones dropped).
    public let entries: [String]

    /// The list in curl's `NO_PROXY` syntax: host names, domains and addresses separated by commas
    /// or white space; `*` alone matches every host.
    public init(_ text: String) {
        entries = text.split(separator: ",").map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
    }

    /// The list of these entries, each in the syntax of one `NO_PROXY` item.
    public init(entries: [String]) {
        self.entries = entries.map { $0.trimmingWhitespace() }.filter { !$0.isEmpty }
    }

    /// True when `host` must not go through a proxy.
    public func matches(host: String) -> Bool {
        guard !entries.isEmpty else { return false }  // the usual list, asked for every proxied request
        let host = Self.normalized(host)
        let hostAddress = IPAddressBytes(host)
        for entry in entries {
            if entry == "*" { return true }
            if let slash = entry.firstIndex(of: "/") {
                guard let hostAddress, let network = IPAddressBytes(Self.normalized(String(entry[..<slash]))),
                    let bits = Int(entry[entry.index(after: slash)...])
                else { continue }
                if hostAddress.isInNetwork(network, prefixLength: bits) { return true }
                continue
            }
            let name = Self.normalized(Self.droppingPort(entry))
            if let address = IPAddressBytes(name) {
                if address == hostAddress { return true }
                continue
            }
            let domain = name.hasPrefix(".") ? String(name.dropFirst()) : name
            if domain.isEmpty { continue }
            if host == domain || host.hasSuffix("." + domain) { return true }
        }
        return false
    }

    private static func normalized(_ text: String) -> String {
        var value = text.lowercased()
        if value.hasPrefix("[") && value.hasSuffix("]") { value = String(value.dropFirst().dropLast()) }
        if value.hasSuffix(".") { value.removeLast() }
        return value
    }

    private static func droppingPort(_ entry: String) -> String {
        if entry.hasPrefix("["), let close = entry.firstIndex(of: "]") { return String(entry[...close]) }
        let colons = entry.filter { $0 == ":" }.count
        if colons == 1, let colon = entry.firstIndex(of: ":") { return String(entry[..<colon]) }
        return entry
    }
}

/// An IPv4 or IPv6 address as bytes, for comparisons.
struct IPAddressBytes: Hashable {
    let bytes: [UInt8]

    init?(_ text: String) {
        var v4 = in_addr()
        var v6 = in6_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
        } else if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
        } else {
            return nil
        }
    }

    func isInNetwork(_ network: IPAddressBytes, prefixLength: Int) -> Bool {
        guard bytes.count == network.bytes.count, (0...(bytes.count * 8)).contains(prefixLength) else { return false }
        var remaining = prefixLength
        for index in bytes.indices where remaining > 0 {
            let bits = min(8, remaining)
            let mask = UInt8(truncatingIfNeeded: 0xFF << (8 - bits))
            if bytes[index] & mask != network.bytes[index] & mask { return false }
            remaining -= bits
        }
        return true
    }
}
