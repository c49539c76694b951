/// Domain names in their ASCII form (IDNA's A-labels): RFC 3492's Punycode for each label that is
/// not ASCII, behind `xn--`.
///
/// Names are compared in this one form: the Public Suffix List writes internationalised suffixes
/// as Unicode (`公司.cn`), certificates and `Set-Cookie` write them as A-labels (`xn--55qx5d.cn`),
/// and a rule must match whichever form it meets.
enum Punycode {
    /// `domain` with every non-ASCII label lowercased and encoded as an A-label; ASCII labels are
    /// lowercased only. Nil when a label cannot be encoded (too long to be a DNS label).
    static func asciiDomain(_ domain: String) -> String? {
        if domain.utf8.allSatisfy({ $0 < 0x80 }) { return domain.lowercased() }
        var labels: [String] = []
        for label in domain.split(separator: ".", omittingEmptySubsequences: false) {
            let lowered = label.lowercased()
            if lowered.utf8.allSatisfy({ $0 < 0x80 }) {
                labels.append(lowered)
                continue
            }
            guard let encoded = encode(Array(lowered.unicodeScalars)), encoded.utf8.count + 4 <= 63 else { return nil }
            labels.append("xn--" + encoded)
        }
        return labels.joined(separator: ".")
    }

    // RFC 3492 section 5: the parameters for IDNA.
    private static let base = 36
    private static let tMin = 1
    private static let tMax = 26
    private static let skew = 38
    private static let damp = 700
    private static let initialBias = 72
    private static let initialN = 0x80

    /// RFC 3492 section 6.3: the Punycode of `input` (without `xn--`); nil on overflow.
    static func encode(_ input: [Unicode.Scalar]) -> String? {
        let codes = input.map { Int($0.value) }
        var output = codes.filter { $0 < 0x80 }.map { Character(Unicode.Scalar(UInt8($0))) }
        let basicCount = output.count
        var handled = basicCount
        if basicCount > 0 { output.append("-") }
        var n = initialN
        var delta = 0
        var bias = initialBias
        while handled < codes.count {
            guard let m = codes.filter({ $0 >= n }).min() else { return nil }
            let (step, overflow) = (m - n).multipliedReportingOverflow(by: handled + 1)
            guard !overflow, delta <= Int(UInt32.max) - step else { return nil }
            delta += step
            n = m
            for code in codes {
                if code < n {
                    delta += 1
                    guard delta <= Int(UInt32.max) else { return nil }
                }
                guard code == n else { continue }
                var q = delta
                var k = base
                while true {
                    let t = k <= bias ? tMin : (k >= bias + tMax ? tMax : k - bias)
                    if q < t { break }
                    output.append(digit(t + (q - t) % (base - t)))
                    q = (q - t) / (base - t)
                    k += base
                }
                output.append(digit(q))
                bias = adapt(delta, points: handled + 1, first: handled == basicCount)
                delta = 0
                handled += 1
            }
            delta += 1
            n += 1
        }
        return String(output)
    }

    private static func digit(_ value: Int) -> Character {
        Character(Unicode.Scalar(UInt8(value < 26 ? 0x61 + value : 0x30 + value - 26)))
    }

    /// RFC 3492 section 6.1.
    private static func adapt(_ delta: Int, points: Int, first: Bool) -> Int {
        var delta = first ? delta / damp : delta / 2
        delta += delta / points
        var k = 0
        while delta > ((base - tMin) * tMax) / 2 {
            delta /= base - tMin
            k += base
        }
        return k + ((base - tMin + 1) * delta) / (delta + skew)
    }
}
