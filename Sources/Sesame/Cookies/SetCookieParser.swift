import FoundationEssentials
import Glibc

/// RFC 6265 section 5.2 (parsing a `Set-Cookie` field) and 5.3 (what is stored for a request URL).
enum SetCookieParser {
    /// Longest name plus value accepted (RFC 6265 section 6.1's minimum, as browsers use).
    static let maximumSize = 4_096

    /// The cookie `field` sets for a response to `url`, or nil when it must be ignored (malformed,
    /// too large, a domain the URL's host does not belong to, a public suffix, or Secure from
    /// plain http). Expired cookies are returned (they delete their stored namesake).
    static func cookie(from field: String, for url: URL, at now: Date = Date()) -> Cookie? {
        guard let rawHost = url.host(percentEncoded: false), let scheme = url.scheme?.lowercased() else { return nil }
        // RFC 6265bis section 5.7: a field with a control character (other than a tab between its
        // parts) is ignored whole.
        guard !field.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else { return nil }
        let host = CookieRules.canonicalHost(rawHost)
        var parts = field.split(separator: ";", omittingEmptySubsequences: false).map(String.init)
        guard !parts.isEmpty else { return nil }
        let pair = parts.removeFirst()
        guard let equals = pair.firstIndex(of: "=") else { return nil }
        let name = pair[..<equals].trimmingWhitespace()
        var value = pair[pair.index(after: equals)...].trimmingWhitespace()
        if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
            value = String(value.dropFirst().dropLast())
        }
        // A tab inside a name or value is refused too: no cookie file could hold it (a tab
        // separates its fields), and Sesame stores only what it can write back.
        guard !name.isEmpty, name.utf8.count + value.utf8.count <= maximumSize,
            !name.utf8.contains(0x09), !value.utf8.contains(0x09)
        else { return nil }

        var expires: Date?
        var maxAge: Date?
        var domainAttribute: String?
        var path: String?
        var secure = false
        var httpOnly = false
        var sameSite: String?
        for attribute in parts {
            let (key, attributeValue): (String, String)
            if let equals = attribute.firstIndex(of: "=") {
                key = attribute[..<equals].trimmingWhitespace().lowercased()
                attributeValue = attribute[attribute.index(after: equals)...].trimmingWhitespace()
            } else {
                key = attribute.trimmingWhitespace().lowercased()
                attributeValue = ""
            }
            switch key {
            case "expires":
                if let date = CookieDate.parse(attributeValue) { expires = date }
            case "max-age":
                guard let first = attributeValue.first, first == "-" || first.isASCII && first.isNumber,
                    attributeValue.dropFirst().allSatisfy({ $0.isASCII && $0.isNumber })
                else { continue }
                let seconds = Int(attributeValue) ?? (first == "-" ? Int.min : Int.max)
                maxAge = seconds <= 0 ? .distantPast : now.addingTimeInterval(TimeInterval(min(seconds, 400 * 86_400)))
            case "domain":
                guard !attributeValue.isEmpty else { continue }
                // A Domain that is no DNS name (a label too long to encode) is a cookie to ignore.
                guard var domain = Punycode.asciiDomain(attributeValue) else { return nil }
                if domain.hasPrefix(".") { domain.removeFirst() }
                if domain.hasSuffix(".") { domain.removeLast() }
                domainAttribute = domain
            case "path":
                path = attributeValue.hasPrefix("/") && !attributeValue.utf8.contains(0x09) ? attributeValue : nil
            case "secure":
                secure = true
            case "httponly":
                httpOnly = true
            case "samesite":
                sameSite = attributeValue
            default:
                continue
            }
        }
        // Secure cookies only from secure origins (RFC 6265bis 5.7 step 11).
        if secure && scheme != "https" { return nil }
        var hostOnly = true
        var domain = host
        if let domainAttribute, !domainAttribute.isEmpty {
            if PublicSuffixList.isPublicSuffix(domainAttribute, in: .all) {
                guard domainAttribute == host else { return nil }
            } else {
                guard CookieRules.domainMatches(host: host, domain: domainAttribute) else { return nil }
                hostOnly = false
                domain = domainAttribute
            }
        }
        return Cookie(
            name: name,
            value: value,
            domain: domain,
            isHostOnly: hostOnly,
            path: path ?? CookieRules.defaultPath(url),
            expires: maxAge ?? expires.map { min($0, now.addingTimeInterval(400 * 86_400)) },
            isSecure: secure,
            isHTTPOnly: httpOnly,
            sameSite: sameSite,
            created: now
        )
    }
}

/// RFC 6265 section 5.1.1: the forgiving cookie-date algorithm.
enum CookieDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    static func parse(_ text: String) -> Date? {
        var time: (Int, Int, Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        let tokens = text.split { character in
            guard let ascii = character.asciiValue else { return false }
            return ascii == 0x09 || (0x20...0x2F).contains(ascii) || (0x3B...0x40).contains(ascii)
                || (0x5B...0x60).contains(ascii) || (0x7B...0x7E).contains(ascii)
        }
        for token in tokens {
            let lowered = token.lowercased()
            if time == nil, let parsed = parseTime(lowered) {
                time = parsed
            } else if day == nil, let digits = leadingDigits(lowered, 1...2) {
                day = digits
            } else if month == nil, let index = months.firstIndex(where: { lowered.hasPrefix($0) }) {
                month = index + 1
            } else if year == nil, let digits = leadingDigits(lowered, 2...4) {
                year = digits
            }
        }
        guard let (hour, minute, second) = time, let day, let month, var year else { return nil }
        if (70...99).contains(year) { year += 1900 } else if (0...69).contains(year) { year += 2000 }
        guard (1...31).contains(day), year >= 1601, hour <= 23, minute <= 59, second <= 59 else { return nil }
        var components = DateComponents()
        components.year = year
        components.month = month
        components.day = day
        components.hour = hour
        components.minute = minute
        components.second = second
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == day else {
            return nil  // 31 February and the like
        }
        return date
    }

    private static func leadingDigits(_ token: String, _ count: ClosedRange<Int>) -> Int? {
        let digits = token.prefix { $0.isASCII && $0.isNumber }
        guard count.contains(digits.count) else { return nil }
        if let next = token.dropFirst(digits.count).first, next.isASCII && next.isNumber { return nil }
        return Int(digits)
    }

    private static func parseTime(_ token: String) -> (Int, Int, Int)? {
        let parts = token.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        var values: [Int] = []
        for (index, part) in parts.enumerated() {
            let digits = part.prefix { $0.isASCII && $0.isNumber }
            guard (1...2).contains(digits.count), index == 2 || digits.count == part.count, let value = Int(digits)
            else { return nil }
            values.append(value)
        }
        return (values[0], values[1], values[2])
    }
}
