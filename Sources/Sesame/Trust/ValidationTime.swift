import FoundationEssentials
import Glibc

/// RFC 3339 times for a validation time (`sesame trust evaluate --at`, test vectors): a date and
/// a time with seconds, an optional fraction of a second (kept; validation happens in its whole
/// second, RFC 5280's granularity), and `Z` or a numeric offset.
public enum ValidationTime {
    /// Parses `2024-04-01T00:00:00Z`, `2024-04-01T00:00:00.5+02:00`, `2024-04-01 00:00:00z`.
    /// - Throws: ``SesameError/Code/invalidArgument`` naming what is wrong.
    public static func parse(_ text: String) throws -> Date {
        let bytes = Array(text.utf8)
        func fail(_ why: String) -> SesameError {
            SesameError(
                .invalidArgument,
                "'\(text)' is not an RFC 3339 time (\(why)); for example 2026-01-31T12:00:00Z"
            )
        }
        var index = 0
        func number(_ digits: Int, _ what: String) throws -> Int {
            guard index + digits <= bytes.count else { throw fail("the \(what) is cut short") }
            var value = 0
            for byte in bytes[index..<(index + digits)] {
                guard (0x30...0x39).contains(byte) else { throw fail("the \(what) is not \(digits) digits") }
                value = value * 10 + Int(byte - 0x30)
            }
            index += digits
            return value
        }
        func expect(_ allowed: String, _ what: String) throws {
            guard index < bytes.count, allowed.utf8.contains(bytes[index]) else { throw fail("\(what) expected") }
            index += 1
        }
        let year = try number(4, "year")
        try expect("-", "'-' after the year")
        let month = try number(2, "month")
        try expect("-", "'-' after the month")
        let day = try number(2, "day")
        try expect("Tt ", "'T' between the date and the time")
        let hour = try number(2, "hour")
        try expect(":", "':' after the hour")
        let minute = try number(2, "minute")
        try expect(":", "':' after the minutes")
        let second = try number(2, "seconds")
        var fraction = 0.0
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            var scale = 0.1
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                fraction += Double(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { throw fail("no digits after the decimal point") }
        }
        guard index < bytes.count else { throw fail("no time zone: add Z or an offset such as +01:00") }
        var offset = 0
        switch bytes[index] {
        case UInt8(ascii: "Z"), UInt8(ascii: "z"):
            index += 1
        case UInt8(ascii: "+"), UInt8(ascii: "-"):
            let sign = bytes[index] == UInt8(ascii: "-") ? -1 : 1
            index += 1
            let hours = try number(2, "offset hours")
            try expect(":", "':' in the offset")
            let minutes = try number(2, "offset minutes")
            guard hours < 24, minutes < 60 else { throw fail("the offset is out of range") }
            offset = sign * (hours * 3600 + minutes * 60)
        default:
            throw fail("the time zone must be Z or an offset such as +01:00")
        }
        guard index == bytes.count else { throw fail("unexpected text after the time zone") }
        let daysInMonth = [
            31, year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31,
        ]
        guard (1...12).contains(month), (1...daysInMonth[month - 1]).contains(day) else { throw fail("no such date") }
        // RFC 3339 allows a leap second (60); it is the last second of its minute here.
        guard hour < 24, minute < 60, second <= 60 else { throw fail("no such time of day") }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = Double(days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offset)
        return Date(timeIntervalSince1970: seconds + fraction)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
