import ArgumentParser
import HPSyncModel
import HPSyncStore

/// A duration option (`AgeText`: `90s`, `1h30m`, `2d`, `0`), parsed once by
/// the argument parser: a bad value is a usage error before `validate()`, and `run()` reads
/// `seconds` instead of parsing the text again.
struct Age: ExpressibleByArgument, CustomStringConvertible, Sendable {
    let seconds: Int64
    /// As typed: for messages, and the help's "(default: 180d)".
    let description: String

    init?(argument: String) {
        guard let seconds = AgeText.parse(argument) else { return nil }
        self.seconds = seconds
        self.description = argument
    }

    var milliseconds: Int64 { seconds * 1000 }

    /// `--keep-deleted`: an age, or `0` to keep nothing.
    struct OrZero: ExpressibleByArgument, CustomStringConvertible, Sendable {
        /// nil for `0`.
        let age: Age?

        init?(argument: String) {
            guard let age = Age(argument: argument) else { return nil }
            self.age = age.seconds == 0 ? nil : age
        }

        var milliseconds: Int64 { age?.milliseconds ?? 0 }
        var description: String { age?.description ?? "0" }
    }
}

extension PeerPermission: ExpressibleByArgument {}
