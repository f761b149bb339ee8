/// Durations as people type and read them: `90s`, `45m`, `2h`, `1d`, `2w` (a bare number is seconds).
enum AgeText {
    private static let units: [(suffix: Character, seconds: Int64)] = [
        ("s", 1), ("m", 60), ("h", 3600), ("d", 86_400), ("w", 604_800),
    ]

    /// Seconds, or nil when `text` is not a positive duration.
    static func parse(_ text: String) -> Int64? {
        var digits = Substring(text)
        var factor: Int64 = 1
        if let last = text.last, let unit = units.first(where: { $0.suffix == last }) {
            digits = digits.dropLast()
            factor = unit.seconds
        }
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), let value = Int64(digits), value > 0,
            value <= Int64.max / factor / 1000
        else { return nil }
        return value * factor
    }

    /// "42 s", "17 min", "3 h 5 min", "2 d 4 h".
    static func describe(seconds: Int64) -> String {
        let seconds = max(seconds, 0)
        switch seconds {
        case ..<60: return "\(seconds) s"
        case ..<3600: return "\(seconds / 60) min"
        case ..<86_400: return "\(seconds / 3600) h \(seconds % 3600 / 60) min"
        default: return "\(seconds / 86_400) d \(seconds % 86_400 / 3600) h"
        }
    }
}
