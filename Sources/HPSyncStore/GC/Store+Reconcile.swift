import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// The sink's reads during a full reconciliation (`ReconcileStep`, applied by `RemoteApply`).
extension Store {
    /// The horizon of the reconciliation in progress with `source`, or nil.
    package func reconciliationInProgress(source: StoreID) throws -> VersionStamp? {
        try read { db in
            try Int64.fetchOne(
                db, sql: "SELECT horizon FROM reconcile WHERE peerStoreID = ?", arguments: [Data(source.bytes)]
            ).map { VersionStamp(rawValue: UInt64(bitPattern: $0)) }
        }
    }

    /// How many live items the final page of a reconciliation with `source` at `horizon` will
    /// delete: those stamped before the horizon that no page listed (`countRecorded`: the pages
    /// an earlier transaction recorded count as listed) and that are not in `alsoListed`.
    package func reconciliationVictimCount(
        source: StoreID, horizon: VersionStamp, countRecorded: Bool, alsoListed: [ItemKey]
    ) throws -> Int {
        try read { db in
            let recorded =
                countRecorded
                ? "AND NOT EXISTS (SELECT 1 FROM reconcileListed r WHERE r.peerStoreID = ? AND r.key = item.key)" : ""
            let stamp = Int64(bitPattern: horizon.rawValue)
            var arguments: StatementArguments = [stamp]
            if countRecorded { arguments += [Data(source.bytes)] }
            var count =
                try Int.fetchOne(
                    db, sql: "SELECT count(*) FROM item WHERE deleted = 0 AND stamp < ? \(recorded)",
                    arguments: arguments) ?? 0
            for chunk in stride(from: 0, to: alsoListed.count, by: 500) {
                let keys = alsoListed[chunk..<min(chunk + 500, alsoListed.count)].map(\.rawValue)
                let marks = Array(repeating: "?", count: keys.count).joined(separator: ",")
                var listed = arguments
                listed += StatementArguments(keys)
                count -=
                    try Int.fetchOne(
                        db,
                        sql:
                            "SELECT count(*) FROM item WHERE deleted = 0 AND stamp < ? \(recorded) AND key IN (\(marks))",
                        arguments: listed) ?? 0
            }
            return count
        }
    }
}

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
