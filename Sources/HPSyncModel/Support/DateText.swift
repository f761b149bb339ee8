/// ISO 8601 UTC text with milliseconds, done by hand so it is exact, fast and the same on every
/// platform (Foundation's formatters differ between Darwin and Linux).
public enum DateText {
    /// `2024-01-02T03:04:05.678Z` for milliseconds since 1970.
    public static func iso8601(milliseconds: Int64) -> String {
        let (days, msOfDay) = floorDivide(milliseconds, 86_400_000)
        let (year, month, day) = civil(fromDays: days)
        let hours = msOfDay / 3_600_000
        let minutes = msOfDay / 60_000 % 60
        let seconds = msOfDay / 1000 % 60
        let millis = msOfDay % 1000
        return "\(pad(year, 4))-\(pad(month, 2))-\(pad(day, 2))T\(pad(hours, 2)):\(pad(minutes, 2)):"
            + "\(pad(seconds, 2)).\(pad(millis, 3))Z"
    }

    /// Parses `YYYY-MM-DD` (midnight UTC) or `YYYY-MM-DDTHH:MM[:SS[.fff]](Z|±HH:MM)`.
    public static func parse(_ text: String) -> Int64? {
        let chars = Array(text.utf8)
        func number(_ start: Int, _ count: Int) -> Int64? {
            guard start + count <= chars.count else { return nil }
            var value: Int64 = 0
            for c in chars[start..<start + count] {
                guard (48...57).contains(c) else { return nil }
                value = value * 10 + Int64(c - 48)
            }
            return value
        }
        guard chars.count >= 10, chars[4] == 45, chars[7] == 45, let year = number(0, 4), let month = number(5, 2),
            let day = number(8, 2), (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day)
        else { return nil }
        var ms = days(fromCivil: year, month, day) * 86_400_000
        if chars.count == 10 { return ms }
        guard chars[10] == 84 || chars[10] == 116 || chars[10] == 32, let hour = number(11, 2), chars.count > 13,
            chars[13] == 58, let minute = number(14, 2), hour < 24, minute < 60
        else { return nil }
        ms += (hour * 60 + minute) * 60_000
        var index = 16
        if index < chars.count && chars[index] == 58 {
            guard let second = number(index + 1, 2), second < 61 else { return nil }
            ms += second * 1000
            index += 3
            if index < chars.count && (chars[index] == 46 || chars[index] == 44) {
                index += 1
                var digits = 0
                var fraction: Int64 = 0
                while index < chars.count, (48...57).contains(chars[index]) {
                    if digits < 3 { fraction = fraction * 10 + Int64(chars[index] - 48) }
                    digits += 1
                    index += 1
                }
                guard digits > 0 else { return nil }
                if digits < 3 { for _ in digits..<3 { fraction *= 10 } }
                ms += fraction
            }
        }
        guard index < chars.count else { return nil }
        if chars[index] == 90 || chars[index] == 122 { return index + 1 == chars.count ? ms : nil }
        guard chars[index] == 43 || chars[index] == 45, let offH = number(index + 1, 2), index + 6 == chars.count,
            chars[index + 3] == 58, let offM = number(index + 4, 2)
        else { return nil }
        let offset = (offH * 60 + offM) * 60_000
        return chars[index] == 43 ? ms - offset : ms + offset
    }

    private static func pad(_ value: Int64, _ width: Int) -> String {
        let text = String(value)
        return text.count >= width ? text : String(repeating: "0", count: width - text.count) + text
    }

    private static func floorDivide(_ a: Int64, _ b: Int64) -> (Int64, Int64) {
        let q = a / b
        let r = a % b
        return r < 0 ? (q - 1, r + b) : (q, r)
    }

    private static func daysIn(month: Int64, year: Int64) -> Int64 {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Howard Hinnant's days-from-civil.
    static func days(fromCivil year: Int64, _ month: Int64, _ day: Int64) -> Int64 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yoe = y - era * 400
        let doy = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy
        return era * 146_097 + doe - 719_468
    }

    static func civil(fromDays z0: Int64) -> (Int64, Int64, Int64) {
        let z = z0 + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let doe = z - era * 146_097
        let yoe = (doe - doe / 1460 + doe / 36524 - doe / 146_096) / 365
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100)
        let mp = (5 * doy + 2) / 153
        let day = doy - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yoe + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
