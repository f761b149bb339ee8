import ArgumentParser
import Foundation

/// Checks of the item fields people type at the command line (`add`, `edit`).
///
/// The store accepts any text from peers and imports (and the output escapes it); a name typed
/// here with a control character in it is almost always a paste accident or a prank, so it is
/// refused before it reaches the store and every peer.
enum ItemArguments {
    /// `--value`: whole dollars. Parsed unconditionally so that `--value -5` (a debt, a credit:
    /// the model and the protocol carry any Int64) is a value, not taken for an option.
    static func dollars(_ text: String) throws -> Int64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let value = Int64(trimmed) { return value }
        if let number = Double(trimmed), number.isFinite {
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
