import FoundationEssentials
import Glibc

/// The Public Suffix List, read once from Debian's `publicsuffix` package
/// (`/usr/share/publicsuffix/public_suffix_list.dat`), with its two sections kept apart:
/// - the ICANN DOMAINS section (suffixes under registries: `com`, `co.uk`) decides wildcard
///   certificate names, as the Baseline Requirements §3.2.2.6 tell CAs (and browsers check);
/// - both sections (PRIVATE DOMAINS adds suffixes companies open to the public, such as
///   `github.io` or `s3.amazonaws.com`) decide cookie scope, as RFC 6265 user agents use them.
/// When the file is missing, only single-label suffixes (`com`) are known.
enum PublicSuffixList {
    /// Which of the list's sections a check consults.
    enum Sections: Sendable {
        /// ICANN DOMAINS only.
        case icann
        /// ICANN DOMAINS and PRIVATE DOMAINS.
        case all
    }

    struct Rules: Sendable {
        var exact: Set<String> = []
        var wildcards: Set<String> = []
        var exceptions: Set<String> = []

        func contains(_ name: String) -> Bool {
            if exceptions.contains(name) { return false }
            if exact.contains(name) { return true }
            if let dot = name.firstIndex(of: "."), wildcards.contains(String(name[name.index(after: dot)...])) {
                return true
            }
            return false
        }
    }

    static let path = "/usr/share/publicsuffix/public_suffix_list.dat"

    private static let rules: (icann: Rules, private: Rules) = parse(
        (try? UserFile.readIfPresent(path, as: .systemData)).flatMap { $0 } ?? []
    )

    /// The rules of a list's text, by section (a rule before either section's marker counts as ICANN).
    static func parse(_ bytes: [UInt8]) -> (icann: Rules, private: Rules) {
        var icann = Rules()
        var privateRules = Rules()
        var inPrivate = false
        for line in String(decoding: bytes, as: UTF8.self).split(whereSeparator: \.isNewline) {
            if line.hasPrefix("// ===BEGIN PRIVATE DOMAINS===") {
                inPrivate = true
                continue
            }
            if line.hasPrefix("// ===BEGIN ICANN DOMAINS===") {
                inPrivate = false
                continue
            }
            let written = line.prefix { !$0.isWhitespace }
            if written.isEmpty || written.hasPrefix("//") { continue }
            // The list writes internationalised rules in Unicode; they are kept as A-labels, the
            // one form every name is compared in.
            guard let rule = Punycode.asciiDomain(String(written)) else { continue }
            if rule.hasPrefix("!") {
                if inPrivate {
                    privateRules.exceptions.insert(String(rule.dropFirst()))
                } else {
                    icann.exceptions.insert(String(rule.dropFirst()))
                }
            } else if rule.hasPrefix("*.") {
                if inPrivate {
                    privateRules.wildcards.insert(String(rule.dropFirst(2)))
                } else {
                    icann.wildcards.insert(String(rule.dropFirst(2)))
                }
            } else if inPrivate {
                privateRules.exact.insert(rule)
            } else {
                icann.exact.insert(rule)
            }
        }
        return (icann, privateRules)
    }

    /// True when `name` (no trailing dot; internationalised labels as Unicode or as `xn--`
    /// A-labels, either) is itself a public suffix in `sections`, so that a cookie for
    /// `Domain=name` (both sections) or a certificate for `*.name` (ICANN) would cover names of
    /// unrelated owners.
    static func isPublicSuffix(_ name: String, in sections: Sections) -> Bool {
        guard let name = Punycode.asciiDomain(name) else { return true }  // not a DNS name: refuse
        if !name.contains(".") { return true }
        if rules.icann.contains(name) { return true }
        return sections == .all && rules.private.contains(name)
    }
}
