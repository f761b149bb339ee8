import Foundation
import GRDB
import HPSyncModel

/// An item's user-visible fields, drawn from the extremes of what a store's columns can hold.
public struct ExtremeFields: Sendable, CustomStringConvertible {
    public var name: String
    public var serial: String?
    public var value: Int64
    public var date: Int64

    public init(name: String, serial: String?, value: Int64, date: Int64) {
        self.name = name
        self.serial = serial
        self.value = value
        self.date = date
    }

    /// Mostly the listed extremes, sometimes anything at all.
    public static func random(using generator: inout SplitMix64) -> ExtremeFields {
        ExtremeFields(
            name: ExtremeRecords.text(using: &generator),
            serial: Int.random(in: 0..<4, using: &generator) == 0 ? nil : ExtremeRecords.text(using: &generator),
            value: ExtremeRecords.pick(ExtremeRecords.values, using: &generator) {
                Int64.random(in: .min ... .max, using: &$0)
            },
            date: ExtremeRecords.pick(ExtremeRecords.dates, using: &generator) {
                Int64.random(in: .min ... .max, using: &$0)
            })
    }

    /// Short enough for a failure message: huge texts by their size.
    public var description: String {
        func shown(_ text: String) -> String {
            text.utf8.count > 80 ? "<\(text.utf8.count) bytes>" : text.debugDescription
        }
        return "name \(shown(name)), serial \(serial.map(shown) ?? "nil"), value \(value), date \(date)"
    }
}

/// Rows written straight into a store's SQLite file, past every rule the store enforces, as rows
/// written before a rule existed (or by an older or broken build) would be: what property tests
/// put in a store before rendering every view of it.
public enum ExtremeRecords {
    public static let values: [Int64] = [
        .min, .max, .min + 1, .max - 1, 0, -1, 1, 2_147_483_647, -2_147_483_648, 2_147_483_648, 1 << 53, -(1 << 53) - 1,
    ]
    /// Int64's ends, the epoch, the first and last milliseconds of years 1 and 9999.
    public static let dates: [Int64] = [
        .min, .max, .min + 1, .max - 1, 0, -1, -62_135_596_800_000, 253_402_300_799_999, 86_399_999,
    ]
    public static let texts: [String] = [
        "", " ", "\u{0}", "<script>alert(1)</script>", "&amp; \"quoted\" 'single' `tick`", "\u{1B}[31mred\u{1B}[0m",
        "\u{202E}txt.exe", "Ünïcödé ✓ 📦 中文 👨‍👩‍👧", "line\nbreak\r\ttab\u{2028}", "%s%n{}\\\\", "e\u{301}\u{301}\u{301}",
        String(repeating: "📦", count: 2_000), String(repeating: "x", count: 100_000), "-", "0", "NaN",
    ]

    /// An element of `list`, or (one time in four) whatever `other` makes.
    public static func pick<T>(
        _ list: [T], using generator: inout SplitMix64, other: (inout SplitMix64) -> T
    ) -> T {
        Int.random(in: 0..<4, using: &generator) == 0 ? other(&generator) : list.randomElement(using: &generator)!
    }

    /// One of `texts`, or up to 40 random Unicode scalars (controls and all).
    public static func text(using generator: inout SplitMix64) -> String {
        pick(texts, using: &generator) { generator in
            var text = String.UnicodeScalarView()
            for _ in 0..<Int.random(in: 0...40, using: &generator) {
                let raw = UInt32.random(in: 0...0x10_FFFF, using: &generator)
                text.append(Unicode.Scalar(raw) ?? "\u{FFFD}")
            }
            return String(text)
        }
    }

    /// Sets the fields of `key`'s row in the store at `storeDirectory`.
    public static func overwrite(_ key: ItemKey, with fields: ExtremeFields, inStore storeDirectory: URL) throws {
        try database(storeDirectory).write { db in
            try db.execute(
                sql: "UPDATE item SET name = ?, serialNumber = ?, valueInDollars = ?, dateCreated = ? WHERE key = ?",
                arguments: [fields.name, fields.serial, fields.value, fields.date, key.rawValue])
            guard db.changesCount == 1 else { throw MissingRow(key: key) }
        }
    }

    /// Adds a trash entry of `key` (no image) with `fields`, trashed at `trashedAt`.
    public static func addTrashEntry(
        _ key: ItemKey, with fields: ExtremeFields, trashedAt: Int64, inStore storeDirectory: URL
    ) throws {
        try database(storeDirectory).write { db in
            try db.execute(
                sql: """
                    INSERT INTO trash (key, name, serialNumber, valueInDollars, dateCreated, stamp, origin, reason, trashedAt)
                    VALUES (?, ?, ?, ?, ?, 1, zeroblob(32), 'overwritten', ?)
                    """,
                arguments: [key.rawValue, fields.name, fields.serial, fields.value, fields.date, trashedAt])
        }
    }

    private static func database(_ storeDirectory: URL) throws -> DatabaseQueue {
        try DatabaseQueue(path: storeDirectory.appendingPathComponent("store.sqlite").path)
    }

    struct MissingRow: Error, CustomStringConvertible {
        var key: ItemKey
        var description: String { "no item row \(key) to overwrite" }
    }
}
