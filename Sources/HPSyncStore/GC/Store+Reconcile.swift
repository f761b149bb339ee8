import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// One manifest page's part in a full reconciliation, committed with the page (`applyRemote`).
///
/// A source that collected tombstones this sink has not seen lists its whole feed instead. The
/// sink records every key listed, page by page, in the page's own transaction (so an
/// interrupted reconciliation resumes); with the final page, every live item here that the
/// listing lacks and that is stamped before the horizon was deleted at the source and becomes a
/// tombstone at `(horizon, source node)`.
package struct ReconcileStep: Sendable {
    package var source: StoreID
    package var sourceNode: NodeID
    /// Set on every page of a listing that starts from 0: its first page (re)starts the
    /// reconciliation at this horizon. nil continues the one in progress with `source`, if any.
    package var horizon: VersionStamp?
    /// True on the first page of the session.
    package var isFirstPage: Bool
    /// Every key on the page, whatever the merge decided for it.
    package var listed: [ItemKey]
    package var isFinal: Bool

    package init(
        source: StoreID, sourceNode: NodeID, horizon: VersionStamp?, isFirstPage: Bool, listed: [ItemKey],
        isFinal: Bool
    ) {
        self.source = source
        self.sourceNode = sourceNode
        self.horizon = horizon
        self.isFirstPage = isFirstPage
        self.listed = listed
        self.isFinal = isFinal
    }

    /// One step for this page and `next`, for a sink that commits several pages at once.
    package func followed(by next: ReconcileStep) -> ReconcileStep {
        ReconcileStep(
            source: source, sourceNode: sourceNode, horizon: horizon ?? next.horizon,
            isFirstPage: isFirstPage || next.isFirstPage, listed: listed + next.listed, isFinal: next.isFinal)
    }
}

extension Store {
    /// The horizon of the reconciliation in progress with `source`, or nil.
    package func reconciliationInProgress(source: StoreID) throws -> VersionStamp? {
        try read { db in
            try Int64.fetchOne(
                db, sql: "SELECT horizon FROM reconcile WHERE peerStoreID = ?", arguments: [Data(source.bytes)]
            ).map { VersionStamp(rawValue: UInt64(bitPattern: $0)) }
        }
    }

    /// This store's rows of `keys` (tombstones included) and, for keys it has no row for, the
    /// virtual tombstone below its GC horizon: the versions an incoming change must beat.
    ///
    /// `applyingNext`: the caller applies these keys next and has no write in flight (a sink
    /// between batches, outside a bulk pull). Up to `mergeBasesOnWriterLimit` keys are then
    /// read on the writer connection (`readOnWriter`), whose apply reads the same leaves again:
    /// an incremental pull at M (1,110 keys) read about 1,000 pages fewer. More keys than that
    /// would not fit beside the apply's own pages in the writer's cache, and are read on a
    /// reader as before.
    package func mergeBases(_ keys: [ItemKey], applyingNext: Bool = false) throws -> [ItemKey: Item] {
        if applyingNext && keys.count <= Self.mergeBasesOnWriterLimit {
            return try readOnWriter { db in try mergeBases(db, keys) }
        }
        return try read { db in try mergeBases(db, keys) }
    }

    /// Keys `mergeBases(_:applyingNext:)` reads on the writer at most: each costs a leaf of the
    /// key index and one of the table, about 1.6 pages of the writer's 5,120.
    static let mergeBasesOnWriterLimit = 2_000

    private func mergeBases(_ db: Database, _ keys: [ItemKey]) throws -> [ItemKey: Item] {
        let virtual = try MetaRecord.load(db).gcHorizon.virtualTombstone
        let rows = try ItemRecord.fetchMany(db, keys: keys)
        var result: [ItemKey: Item] = [:]
        result.reserveCapacity(keys.count)
        var origins = OriginCache()
        for key in keys {
            if let row = rows[key.rawValue] {
                result[key] = try row.item(origins: &origins)
            } else if let virtual {
                result[key] = Item.tombstone(key: key, version: virtual)
            }
        }
        return result
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
