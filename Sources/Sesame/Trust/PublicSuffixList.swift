import Foundation

/// The Public Suffix List, read once from Debian's `publicsuffix` package
/// (`/usr/share/publicsuffix/public_suffix_list.dat`), to refuse wildcard names such as `*.co.uk`
/// or `*.s3.amazonaws.com` that cover a whole public suffix. When the file is missing the check is
/// limited to single-label suffixes (`*.com`).
enum PublicSuffixList {
    private struct Rules: Sendable {
        var exact: Set<String> = []
        var wildcards: Set<String> = []
        var exceptions: Set<String> = []
    }

    static let path = "/usr/share/publicsuffix/public_suffix_list.dat"

    private static let rules: Rules = {
        var rules = Rules()
        guard let bytes = try? PosixFile.read(path) else { return rules }
        for line in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
            let written = line.prefix { !$0.isWhitespace }
            if written.isEmpty || written.hasPrefix("//") { continue }
            // The list writes internationalised rules in Unicode; they are kept as A-labels, the
            // one form every name is compared in.
            guard let rule = Punycode.asciiDomain(String(written)) else { continue }
            if rule.hasPrefix("!") {
                rules.exceptions.insert(String(rule.dropFirst()))
            } else if rule.hasPrefix("*.") {
                rules.wildcards.insert(String(rule.dropFirst(2)))
            } else {
                rules.exact.insert(rule)
            }
        }
        return rules
    }()

    /// True when `name` (no trailing dot; internationalised labels as Unicode or as `xn--`
    /// A-labels, either) is itself a public suffix, so a certificate for `*.name` or a cookie for
    /// `Domain=name` would cover names of unrelated owners.
    static func isPublicSuffix(_ name: String) -> Bool {
        guard let name = Punycode.asciiDomain(name) else { return true }  // not a DNS name: refuse
        if !name.contains(".") { return true }
        if rules.exceptions.contains(name) { return false }
        if rules.exact.contains(name) { return true }
        if let dot = name.firstIndex(of: "."), rules.wildcards.contains(String(name[name.index(after: dot)...])) {
            return true
        }
        return false
    }
}
