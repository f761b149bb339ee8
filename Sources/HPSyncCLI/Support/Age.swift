import ArgumentParser
import HPSyncModel
import HPSyncStore

/// A duration option (`AgeText`: `90s`, `1h30m`, `2d`, `500ms`, `0`), parsed once by
/// the argument parser: a bad value is a usage error before `validate()`, and `run()` reads
/// `milliseconds` instead of parsing the text again.
struct Age: ExpressibleByArgument, CustomStringConvertible, Sendable {
    let milliseconds: Int64
    /// As typed: for messages, and the help's "(default: 180d)".
    let description: String

    init?(argument: String) {
        guard let milliseconds = AgeText.milliseconds(argument) else { return nil }
        self.milliseconds = milliseconds
        self.description = argument
    }

    /// Whole seconds.
    var seconds: Int64 { milliseconds / 1000 }

    var duration: Duration { .milliseconds(milliseconds) }

    /// A usage error unless this is more than no time at all (for timeouts, where `0` would
    /// give up before starting).
    func requirePositive(_ option: String) throws {
        guard milliseconds > 0 else {
            throw ValidationError("\(option) '\(description)' is no time at all; give 10s, 1m or 2m30s")
        }
    }

    /// `--keep-deleted`: an age, or `0` to keep nothing.
    struct OrZero: ExpressibleByArgument, CustomStringConvertible, Sendable {
        /// nil for `0`.
        let age: Age?

        init?(argument: String) {
            guard let age = Age(argument: argument) else { return nil }
            self.age = age.milliseconds == 0 ? nil : age
        }

        var milliseconds: Int64 { age?.milliseconds ?? 0 }
        var description: String { age?.description ?? "0" }
    }
}

extension PeerPermission: ExpressibleByArgument {}

/// Durations as people type and read them, one syntax for every option that takes one (as
/// systemd writes them): `90s`, `45m`, `2h`, `1d`, `2w`, `500ms`, and sums like `1h30m`.
/// `0` is a zero duration everywhere, never "no limit": `--keep-deleted 0` keeps nothing,
/// `--older-than 0` means everything, `--grace 0` waits for nothing; the options where no time at
/// all makes no sense (the network timeouts, `invite --expires`) refuse it.
/// A bare number is refused: `--check 90` could mean seconds or minutes, so it asks for a unit.
enum AgeText {
    private static let units: [(suffix: String, milliseconds: Int64)] = [
        ("ms", 1), ("s", 1000), ("m", 60_000), ("h", 3_600_000), ("d", 86_400_000), ("w", 604_800_000),
    ]

    /// Whole seconds (a sub-second part is dropped), or nil when `text` is not a duration.
    static func parse(_ text: String) -> Int64? {
        milliseconds(text).map { $0 / 1000 }
    }

    /// Milliseconds, or nil when `text` is not a duration (see `problem` for why).
    static func milliseconds(_ text: String) -> Int64? {
        if text == "0" { return 0 }
        var total: Int64 = 0
        var rest = Substring(text)
        while !rest.isEmpty {
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            rest = rest.dropFirst(digits.count)
            let suffix = rest.prefix { $0.isASCII && $0.isLetter }
            rest = rest.dropFirst(suffix.count)
            guard let unit = units.first(where: { $0.suffix == suffix }), let value = Int64(digits) else {
                return nil
            }
            let (product, overflow) = value.multipliedReportingOverflow(by: unit.milliseconds)
            guard !overflow, product <= Int64.max - total else { return nil }
            total += product
        }
        guard total > 0 else { return nil }
        return total
    }

    /// Why `text` is not a duration, with what to type instead.
    static func problem(_ text: String) -> String {
        if let number = Int64(text), number > 0 {
            return "'\(text)' has no unit; write \(text)s, \(text)m, \(text)h or \(text)d (or sums like 1h30m)"
        }
        return "'\(text)' is not a duration; write it as 90s, 45m, 2h, 1d, 2w or 1h30m (0 for none)"
    }

    /// Duration options hidden from the help: the argument parser's message names no value
    /// type for them ("is invalid for '--retry-delay'"), so they are known by name.
    static let hiddenOptions = ["--retry-delay"]

    /// The hint to add to the argument parser's "The value 'X' is invalid for '--opt <duration>'".
    static func hint(forUsageMessage message: String) -> String? {
        guard message.hasPrefix("The value '"),
            message.contains("<duration>'") || hiddenOptions.contains(where: { message.hasSuffix("for '\($0)'") })
        else { return nil }
        let value = message.dropFirst("The value '".count).prefix { $0 != "'" }
        return AgeText.problem(String(value))
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
