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
