import Foundation
import GRDB
import HPSyncModel

/// The image journal's rows, inside one transaction: which temporary each key's next file is.
///
/// A new image is written to `images/.tmp-*` and fsynced; the row naming its digest commits
/// together with a `pendingImage(key, tempName)` entry; then, in a short write transaction (so
/// writers in other processes are serialised), the temporary is renamed to `images/<KEY>` and
/// the entry deleted (`Store.finalizeImages`). Whoever finds an entry (this process, the next
/// `open`, `verify --repair`) may finish it: the steps are idempotent.
struct ImageJournal {
    let db: Database

    init(_ db: Database) {
        self.db = db
    }

    /// Journals `tempName` as the next file of `key`; returns a temporary it superseded.
    func record(key: ItemKey, tempName: String) throws -> String? {
        let previous = try temp(for: key)
        try db.cachedStatement(sql: "INSERT OR REPLACE INTO pendingImage (key, tempName) VALUES (?, ?)")
            .execute(arguments: [key.rawValue, tempName])
        return previous == tempName ? nil : previous
    }

    /// Removes `key`'s entry; returns the temporary it named.
    func drop(key: ItemKey) throws -> String? {
        guard let previous = try temp(for: key) else { return nil }
        try deleteEntry(key: key)
        return previous
    }

    func deleteEntry(key: ItemKey) throws {
        try db.cachedStatement(sql: "DELETE FROM pendingImage WHERE key = ?").execute(arguments: [key.rawValue])
    }

    /// Whether any image write is journaled (committed, not yet renamed into place).
    func hasEntries() throws -> Bool {
        try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM pendingImage)")) ?? false
    }

    /// Remembers that `key`'s row names an image whose bytes did not come (a record applied
    /// without them): the file is out of step with its row until healing fetches it
    /// (`Store.rememberImagesToHeal` does it in a transaction of its own).
    func rememberToHeal(key: ItemKey, now: UInt64) throws {
        try db.cachedStatement(sql: "INSERT OR IGNORE INTO imageToHeal (key, foundAt) VALUES (?, ?)")
            .execute(arguments: [key.rawValue, Int64(now)])
    }

    /// The temporary journaled for `key`, if any.
    func temp(for key: ItemKey) throws -> String? {
        try String.fetchOne(
            db.cachedStatement(sql: "SELECT tempName FROM pendingImage WHERE key = ?"), arguments: [key.rawValue])
    }
}
