import HPSyncStore

/// The CSV dialect of `hp-sync export --format csv` (RFC 4180: CRLF or LF rows, fields quoted
/// when they hold a comma, quote or line break, quotes doubled), written and read back.
///
/// Spreadsheets run a cell that starts with `=`, `+`, `-` or `@` as a formula, so a name like
/// `=HYPERLINK(...)` from a peer would become a link on the user's screen. Text cells that start
/// with one of those, a tab, a carriage return or an apostrophe get a leading apostrophe, which
/// spreadsheets hide and read as "this is text"; reading the file back drops it.
enum CSVTable {
    static func field(_ field: String) -> String {
        guard field.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else { return field }
        return "\"" + field.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    /// A text cell guarded against formula injection (numbers and dates are not text cells).
    static func textField(_ text: String) -> String {
        guard let first = text.unicodeScalars.first, "=+-@\t\r'".unicodeScalars.contains(first) else {
            return field(text)
        }
        return field("'" + text)
    }

    /// The text a `textField` cell stands for.
    static func unguarded(_ cell: String) -> String {
        cell.hasPrefix("'") ? String(cell.dropFirst()) : cell
    }

    /// The rows of `text`, each a list of cells; blank lines are skipped.
    static func rows(_ text: String) throws -> [[String]] {
        var rows: [[String]] = []
        var row: [String] = []
        var cell = ""
        var quoted = false
        var atCellStart = true
        var scalars = text.unicodeScalars.makeIterator()
        var pending = scalars.next()
        if pending == "\u{FEFF}" { pending = scalars.next() }
        func endRow() {
            row.append(cell)
            if !(row.count == 1 && row[0].isEmpty) { rows.append(row) }
            row = []
            cell = ""
            atCellStart = true
        }
        while let scalar = pending {
            pending = scalars.next()
            if quoted {
                if scalar == "\"" {
                    if pending == "\"" {
                        cell.unicodeScalars.append("\"")
                        pending = scalars.next()
                    } else {
                        quoted = false
                    }
                } else {
                    cell.unicodeScalars.append(scalar)
                }
                continue
            }
            switch scalar {
            case "\"" where atCellStart:
                quoted = true
                atCellStart = false
            case ",":
                row.append(cell)
                cell = ""
                atCellStart = true
            case "\r" where pending == "\n":
                continue
            case "\n", "\r":
                endRow()
            default:
                cell.unicodeScalars.append(scalar)
                atCellStart = false
            }
        }
        if quoted { throw StoreError.invalidImport("the CSV ends inside a quoted field; close its quote") }
        if !cell.isEmpty || !row.isEmpty { endRow() }
        return rows
    }
}
