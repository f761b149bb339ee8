import ArgumentParser
import Foundation
import HPSyncModel

/// Checks of the item fields people type at the command line (`add`, `edit`).
///
/// The store accepts any text from peers and imports (and the output escapes it); a name typed
/// here with a control character in it is almost always a paste accident or a prank, so it is
/// refused before it reaches the store and every peer.
enum ItemArguments {
    /// `--value`: whole dollars in `ItemLimits.valueInDollars`. Parsed unconditionally so that
    /// `--value -5` (a debt, a credit) is a value, not taken for an option. Any text gives a
    /// value or a usage error, never a trap (a number beyond Int64 once crashed the conversion).
    static func dollars(_ text: String) throws -> Int64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        let outOfRange = ValidationError(
            "--value \(trimmed) is out of range: values are whole dollars in \(ItemLimits.valueRangeText)")
        if let value = Int64(trimmed) {
            guard ItemLimits.valueInDollars.contains(value) else { throw outOfRange }
            return value
        }
        if let number = Double(trimmed), number.isFinite {
            guard number >= Double(ItemLimits.valueInDollars.lowerBound),
                number <= Double(ItemLimits.valueInDollars.upperBound)
            else { throw outOfRange }
            throw ValidationError(
                "values are whole dollars, without cents; round it (e.g. \(Int64(number.rounded(.down))) or "
                    + "\(Int64(number.rounded(.up))))")
        }
        throw ValidationError("give whole dollars, e.g. --value 35")
    }

    /// Refuses blank names (usage error, like an empty one).
    static func checkNotBlank(_ name: String) throws {
        if name.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
            throw ValidationError("--name must not be blank; give the item a name")
        }
    }

    /// Refuses control characters in typed text (exit 65, bad input data).
    static func checkPrintable(_ text: String?, option: String) throws {
        guard let text, TerminalText.hasControlCharacters(text) else { return }
        throw CommandFailure(
            status: .dataError,
            description: "\(option) '\(TerminalText.escaped(text))' holds control characters (shown escaped); "
                + "type it without them")
    }
}
