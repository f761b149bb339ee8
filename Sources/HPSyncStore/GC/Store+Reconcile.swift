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
public struct ReconcileStep: Sendable {
    public var source: StoreID
    public var sourceNode: NodeID
    /// Set on every page of a listing that starts from 0: its first page (re)starts the
    /// reconciliation at this horizon. nil continues the one in progress with `source`, if any.
    public var horizon: VersionStamp?
    /// True on the first page of the session.
    public var isFirstPage: Bool
    /// Every key on the page, whatever the merge decided for it.
    public var listed: [ItemKey]
    public var isFinal: Bool

    public init(
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
    public func followed(by next: ReconcileStep) -> ReconcileStep {
        ReconcileStep(
            source: source, sourceNode: sourceNode, horizon: horizon ?? next.horizon,
            isFirstPage: isFirstPage || next.isFirstPage, listed: listed + next.listed, isFinal: next.isFinal)
    }
}

extension Store {
    /// The horizon of the reconciliation in progress with `source`, or nil.
    public func reconciliationInProgress(source: StoreID) throws -> VersionStamp? {
        try read { db in
            try Int64.fetchOne(
                db, sql: "SELECT horizon FROM reconcile WHERE peerStoreID = ?", arguments: [Data(source.bytes)]
            ).map { VersionStamp(rawValue: UInt64(bitPattern: $0)) }
        }
    }

    /// This store's rows of `keys` (tombstones included) and, for keys it has no row for, the
    /// virtual tombstone below its GC horizon: the versions an incoming change must beat.
    public func mergeBases(_ keys: [ItemKey]) throws -> [ItemKey: Item] {
        try read { db in
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
    }

    /// How many live items the final page of a reconciliation with `source` at `horizon` will
    /// delete: those stamped before the horizon that no page listed (`countRecorded`: the pages
    /// an earlier transaction recorded count as listed) and that are not in `alsoListed`.
    public func reconciliationVictimCount(
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

    /// What a reconciliation step did inside `applyRemote`'s transaction.
    struct ReconcileEffects {
        var deleted: [ItemKey] = []
        var unlink: [ItemKey] = []
        var supersededTemps: [String] = []
    }

    /// Records the step's keys and, on the final page, turns the unlisted old items into
    /// tombstones. Runs inside `applyRemote`'s transaction, after the page's records.
    func reconcile(
        _ db: Database, _ step: ReconcileStep, clock: inout ChangeClock, keepReplaced: Bool, now: UInt64
    ) throws -> ReconcileEffects {
        let source = Data(step.source.bytes)
        if let horizon = step.horizon, step.isFirstPage {
            // A listing from 0 supersedes whatever an earlier, interrupted one recorded.
            try db.execute(sql: "DELETE FROM reconcileListed WHERE peerStoreID = ?", arguments: [source])
            try db.execute(
                sql:
                    "INSERT OR REPLACE INTO reconcile (peerStoreID, horizon, sourceNode, startedAt) VALUES (?, ?, ?, ?)",
                arguments: [source, Int64(bitPattern: horizon.rawValue), Data(step.sourceNode.bytes), Int64(now)])
        }
        guard
            let stored = try Int64.fetchOne(
                db, sql: "SELECT horizon FROM reconcile WHERE peerStoreID = ?", arguments: [source])
        else { return ReconcileEffects() }
        let insert = try db.cachedStatement(
            sql: "INSERT OR IGNORE INTO reconcileListed (peerStoreID, key) VALUES (?, ?)")
        for key in step.listed { try insert.execute(arguments: [source, key.rawValue]) }
        guard step.isFinal else { return ReconcileEffects() }

        let horizon = VersionStamp(rawValue: UInt64(bitPattern: stored))
        let tombstone = Version(stamp: horizon, origin: step.sourceNode)
        clock.observe(horizon)
        var effects = ReconcileEffects()
        // In batches: each batch's rows stop matching once they are tombstones.
        while true {
            let victims = try ItemRecord.fetchAll(
                db,
                sql: """
                    SELECT * FROM item WHERE deleted = 0 AND stamp < ? AND NOT EXISTS
                      (SELECT 1 FROM reconcileListed r WHERE r.peerStoreID = ? AND r.key = item.key)
                    LIMIT 1000
                    """, arguments: [stored, source])
            if victims.isEmpty { break }
            for victim in victims {
                let key = ItemKey(storedCanonical: victim.key)
                if keepReplaced { try trash(db, victim, deleted: true, now: now) }
                if let temp = try dropJournal(db, key: key) { effects.supersededTemps.append(temp) }
                try ItemRecord(Item.tombstone(key: key, version: tombstone), seq: clock.nextSeq()).write(db)
                effects.deleted.append(key)
                effects.unlink.append(key)
            }
        }
        try db.execute(sql: "DELETE FROM reconcileListed WHERE peerStoreID = ?", arguments: [source])
        try db.execute(sql: "DELETE FROM reconcile WHERE peerStoreID = ?", arguments: [source])
        // This store now agrees with the source below the horizon: it must not accept there
        // what the source would refuse (a stale copy from a third node would revive a deletion).
        try db.execute(
            sql: "UPDATE meta SET gcHorizonStamp = MAX(gcHorizonStamp, ?) WHERE id = 1", arguments: [stored])
        if !effects.deleted.isEmpty {
            logger.notice(
                "full reconciliation deleted items the source no longer has",
                metadata: ["count": "\(effects.deleted.count)", "horizon": "\(horizon)"])
        }
        return effects
    }
}

/// A dry run's reconciliation: the listed keys go to a temporary table of the store's writer
/// connection (never to the database file), so a preview of a million keys stays small in memory
/// and writes nothing.
public final class ReconcilePreview {
    private let store: Store
    private let source: StoreID
    private let continuing: Bool
    private let table = "reconcilePreview_\(UInt64.random(in: 0...UInt64.max))"
    private var created = false

    /// `continuing`: the keys an interrupted reconciliation with `source` recorded count as listed.
    public init(store: Store, source: StoreID, continuing: Bool) {
        self.store = store
        self.source = source
        self.continuing = continuing
    }

    deinit { try? close() }

    public func record(_ keys: [ItemKey]) throws {
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
    public func victims(horizon: VersionStamp) throws -> [ItemKey] {
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
    public func close() throws {
        guard created else { return }
        created = false
        try store.write { db in try db.execute(sql: "DROP TABLE IF EXISTS temp.\(table)") }
    }
}
