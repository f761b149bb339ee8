import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// A dry run's reconciliation: the listed keys go to a temporary table of the store's writer
/// connection (never to the database file), so a preview of a million keys stays small in memory
/// and writes nothing.
package final class ReconcilePreview {
    private let store: Store
    private let source: StoreID
    private let continuing: Bool
    private let table = "reconcilePreview_\(UInt64.random(in: 0...UInt64.max))"
    private var created = false

    /// `continuing`: the keys an interrupted reconciliation with `source` recorded count as listed.
    package init(store: Store, source: StoreID, continuing: Bool) {
        self.store = store
        self.source = source
        self.continuing = continuing
    }

    deinit { try? close() }

    package func record(_ keys: [ItemKey]) throws {
        try store.write { db in
            if !created {
                try db.execute(sql: "CREATE TEMP TABLE \(table) (key TEXT PRIMARY KEY) WITHOUT ROWID")
                created = true
            }
            let insert = try db.cachedStatement(sql: "INSERT OR IGNORE INTO temp.\(table) (key) VALUES (?)")
            for key in keys { try insert.execute(arguments: [key.rawValue]) }
        }
    }

    /// The live items the reconciliation would delete: unlisted and stamped before `horizon`.
    package func victims(horizon: VersionStamp) throws -> [ItemKey] {
        if !created { try record([]) }
        return try store.write { db in
            let earlier =
                continuing
                ? "AND NOT EXISTS (SELECT 1 FROM reconcileListed r WHERE r.peerStoreID = ? AND r.key = item.key)" : ""
            var arguments: StatementArguments = [Int64(bitPattern: horizon.rawValue)]
            if continuing { arguments += [Data(source.bytes)] }
            return try String.fetchAll(
                db,
                sql: """
                    SELECT key FROM item WHERE deleted = 0 AND stamp < ?
                      AND NOT EXISTS (SELECT 1 FROM temp.\(table) p WHERE p.key = item.key) \(earlier)
                    ORDER BY key
                    """, arguments: arguments
            ).map { ItemKey(storedCanonical: $0) }
        }
    }

    /// Drops the temporary table (also done on deinit).
    package func close() throws {
        guard created else { return }
        created = false
        try store.write { db in try db.execute(sql: "DROP TABLE IF EXISTS temp.\(table)") }
    }
}
