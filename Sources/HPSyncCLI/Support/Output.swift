import Foundation
import HPSyncEngine
import HPSyncModel
import HPSyncStore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Writing results to stdout and errors to stderr.
///
/// Human-readable text goes out with its control characters escaped (`TerminalText`), line
/// breaks kept; fields that must stay on one line (table cells, `show`'s values) escape line
/// breaks too. JSON and raw bytes go out exactly as given.
enum Output {
    static func write(_ text: String) {
        writeBytes(Array(TerminalText.escaped(text, keepingNewlines: true).utf8), to: STDOUT_FILENO)
    }

    /// Machine-readable text (JSON), exactly as given.
    static func writeJSON(_ text: String) {
        writeBytes(Array(text.utf8), to: STDOUT_FILENO)
    }

    static func writeData(_ data: Data) {
        writeBytes(Array(data), to: STDOUT_FILENO)
    }

    static func error(_ text: String) {
        lastError = text
        writeBytes(
            Array("hp-sync: error: \(TerminalText.escaped(text, keepingNewlines: true))\n".utf8), to: STDERR_FILENO)
    }

    /// Guidance for the person at the terminal, on stderr so stdout stays one parseable result.
    static func note(_ text: String) {
        let text = TerminalText.escaped(text, keepingNewlines: true)
        writeBytes(Array((text.hasSuffix("\n") ? text : text + "\n").utf8), to: STDERR_FILENO)
    }

    static func warning(_ text: String) {
        writeBytes(
            Array("hp-sync: warning: \(TerminalText.escaped(text, keepingNewlines: true))\n".utf8), to: STDERR_FILENO)
    }

    /// Writes `data` to the file at `path` (atomically), or fails with exit 73 naming the path.
    static func save(_ data: Data, to path: String) throws {
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch {
            throw CommandFailure(
                status: .cannotCreate, description: "cannot write \(path): \(plainReason(error)); check the path")
        }
    }

    /// Refuses (exit 73) to replace an existing file unless `force`, as the README promises, and
    /// a folder where the file should go whatever `force` says (it cannot be replaced).
    /// `fileName` is an example of a file in that folder, for the message.
    static func checkOverwrite(_ path: String, force: Bool, fileName: String = "FILE") throws {
        var isDirectory: ObjCBool = false
        guard FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory) else { return }
        if isDirectory.boolValue {
            let example = URL(fileURLWithPath: path).appendingPathComponent(fileName).path
            throw CommandFailure(
                status: .cannotCreate,
                description: "cannot write \(path): it is a folder; give the path of a file, such as \(example)")
        }
        guard !force else { return }
        throw CommandFailure(
            status: .cannotCreate,
            description: "\(path) exists; give --force to overwrite it, or choose another path")
    }

    /// Why a file operation failed, in words: the POSIX reason beneath Foundation's error
    /// ("No such file or directory", not "NSCocoaErrorDomain error 4").
    static func plainReason(_ error: any Error) -> String {
        let error = error as NSError
        if let underlying = error.userInfo[NSUnderlyingErrorKey] as? NSError, underlying.domain == NSPOSIXErrorDomain {
            return String(cString: strerror(Int32(underlying.code)))
        }
        if error.domain == NSPOSIXErrorDomain { return String(cString: strerror(Int32(error.code))) }
        return error.localizedDescription
    }

    private static func writeBytes(_ bytes: [UInt8], to fd: Int32) {
        let handle = fd == STDERR_FILENO ? FileHandle.standardError : FileHandle.standardOutput
        try? handle.write(contentsOf: bytes)
    }

    /// "inserted 2, updated 0, deleted 1, images 1 (68 bytes)".
    static func summary(_ changes: ChangeSet, milliseconds: Int64? = nil) -> String {
        summary(
            inserted: changes.inserted.count, updated: changes.updated.count, deleted: changes.deleted.count,
            imagesWritten: changes.imagesWritten, imageBytes: changes.imageBytes, milliseconds: milliseconds)
    }

    /// `summary(_:milliseconds:)` from the counts alone (an import report keeps its keys compact).
    static func summary(
        inserted: Int, updated: Int, deleted: Int, imagesWritten: Int, imageBytes: Int64, milliseconds: Int64? = nil
    ) -> String {
        var text =
            "inserted \(inserted), updated \(updated), deleted \(deleted), "
            + "images \(imagesWritten) (\(imageBytes) bytes)"
        if let milliseconds { text += " in \(milliseconds) ms" }
        return text
    }

    /// Columns padded to their widest cell by terminal width (CJK and emoji take two columns),
    /// each cell escaped onto one line; the last column is not padded.
    static func table(_ rows: [[String]]) -> String {
        guard let first = rows.first else { return "" }
        let cells = rows.map { $0.map { TerminalText.escaped($0) } }
        let cellWidths = cells.map { $0.map(TerminalText.width) }
        var widths = [Int](repeating: 0, count: first.count)
        for row in cellWidths { for (index, width) in row.enumerated() { widths[index] = max(widths[index], width) } }
        var out = ""
        out.reserveCapacity(rows.count * (widths.reduce(0, +) + 2 * widths.count))
        for (row, rowWidths) in zip(cells, cellWidths) {
            for (index, cell) in row.enumerated() {
                out += cell
                if index < row.count - 1 {
                    out += String(repeating: " ", count: widths[index] - rowWidths[index] + 2)
                }
            }
            out += "\n"
        }
        return out
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Int64 {
        Int64((ContinuousClock.now - start).seconds * 1000)
    }

    /// One line per field, for `show` and `edit`.
    /// `imageProblem`: what is wrong with the image file (`Store.imageFileProblem`), if anything.
    static func describe(_ item: Item, imagePath: String, imageProblem: String? = nil) -> String {
        var lines = ["key:      \(item.key)"]
        if item.deleted {
            lines.append("deleted:  yes")
        } else {
            lines.append("name:     \(TerminalText.escaped(item.name))")
            lines.append("serial:   \(item.serialNumber.map { TerminalText.escaped($0) } ?? "-")")
            lines.append("value:    \(item.valueInDollars)")
            lines.append("created:  \(DateText.iso8601(milliseconds: item.dateCreatedMilliseconds))")
            if let image = item.image {
                lines.append("image:    \(image.size) bytes, sha256 \(image.digest.hex)")
                if let imageProblem {
                    lines.append(
                        "file:     MISSING: \(imageProblem) (\(imagePath)); repair with `\(Store.repairCommand)`")
                } else {
                    lines.append("file:     \(imagePath)")
                }
            } else {
                lines.append("image:    none")
            }
        }
        lines.append("version:  \(item.version)")
        return lines.joined(separator: "\n") + "\n"
    }
}

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
