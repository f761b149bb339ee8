/// Text from the store made safe to show on a terminal, and its width there.
///
/// Names and serials come from people and from peers; a name holding ESC sequences could clear
/// the screen or retitle the window, and BiDi controls could make a line read differently from
/// what it says. Human-readable output shows such characters as visible escapes (JSON output
/// keeps the exact text: its encoder escapes what JSON needs).
enum TerminalText {
    /// `text` with every control character (C0, DEL, C1), BiDi control and line or paragraph
    /// separator written as a visible escape: `\n`, `\t`, `\r`, `\e`, `\0`, else `\u{XXXX}`.
    /// With `keepingNewlines`, `\n` stays a line break (for messages of several lines).
    static func escaped(_ text: String, keepingNewlines: Bool = false) -> String {
        guard text.unicodeScalars.contains(where: needsEscape) else { return text }
        var out = ""
        out.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            guard needsEscape(scalar), !(keepingNewlines && scalar == "\n") else {
                out.unicodeScalars.append(scalar)
                continue
            }
            switch scalar {
            case "\n": out += "\\n"
            case "\t": out += "\\t"
            case "\r": out += "\\r"
            case "\u{1B}": out += "\\e"
            case "\u{0}": out += "\\0"
            default:
                let hex = String(scalar.value, radix: 16, uppercase: true)
                out += "\\u{" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex + "}"
            }
        }
        return out
    }

    /// Whether a name typed at the command line holds a character `escaped` would rewrite.
    static func hasControlCharacters(_ text: String) -> Bool {
        text.unicodeScalars.contains(where: needsEscape)
    }

    static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F: return true
        // Arabic letter mark, LRM/RLM, embeddings and overrides, isolates, line/paragraph separators.
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069, 0x2028, 0x2029: return true
        default: return false
        }
    }

    /// How many terminal columns `text` takes: East Asian wide and fullwidth characters and
    /// emoji take two, combining marks and zero-width characters none (one grapheme cluster is
    /// as wide as its widest scalar). An approximation of wcwidth(3) that does not depend on
    /// the locale, which cron leaves at "C".
    static func width(_ text: String) -> Int {
        var columns = 0
        for character in text {
            if character.isASCII {
                columns += 1
                continue
            }
            var widest = 0
            for scalar in character.unicodeScalars { widest = max(widest, width(of: scalar)) }
            if character.unicodeScalars.contains("\u{FE0F}") { widest = 2 }
            columns += widest
        }
        return columns
    }

    private static func width(of scalar: Unicode.Scalar) -> Int {
        let value = scalar.value
        switch scalar.properties.generalCategory {
        case .nonspacingMark, .enclosingMark, .format, .control: return 0
        default: break
        }
        if value == 0x200B { return 0 }
        if scalar.properties.isEmojiPresentation { return 2 }
        switch value {
        case 0x1100...0x115F, 0x2E80...0x303E, 0x3041...0x33FF, 0x3400...0x4DBF, 0x4E00...0x9FFF,
            0xA000...0xA4CF, 0xA960...0xA97F, 0xAC00...0xD7A3, 0xF900...0xFAFF, 0xFE10...0xFE19,
            0xFE30...0xFE6F, 0xFF00...0xFF60, 0xFFE0...0xFFE6, 0x1F300...0x1F64F, 0x1F900...0x1F9FF,
            0x20000...0x2FFFD, 0x30000...0x3FFFD:
            return 2
        default:
            return 1
        }
    }
}
