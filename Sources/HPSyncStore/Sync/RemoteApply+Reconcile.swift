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

extension RemoteApply {
    /// What a reconciliation step did inside the batch's transaction.
    struct ReconcileEffects {
        var deleted: [ItemKey] = []
        var unlink: [ItemKey] = []
        var supersededTemps: [String] = []
    }

    /// Records the step's keys and, on the final page, turns the unlisted old items into
    /// tombstones (see `ReconcileStep`). Runs inside the batch's transaction, after its records.
    func reconcile(
        _ db: Database, _ step: ReconcileStep, clock: inout ChangeClock, now: UInt64
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
        var trashInsertion = TrashInsertion(db, images: store.images, trash: store.trashDirectory)
        // In batches: each batch's rows stop matching once they are tombstones.
        while true {
            let victims = try ItemRecord.fetchAll(
                db,
                sql: """
                    SELECT \(ItemRecord.selection) FROM item WHERE deleted = 0 AND stamp < ? AND NOT EXISTS
                      (SELECT 1 FROM reconcileListed r WHERE r.peerStoreID = ? AND r.key = item.key)
                    LIMIT 1000
                    """, arguments: [stored, source])
            if victims.isEmpty { break }
            for victim in victims {
                let key = ItemKey(storedCanonical: victim.key)
                if options.keepReplaced { try trashInsertion.add(replaced: victim, deleted: true, now: now) }
                if let temp = try ImageJournal(db).drop(key: key) { effects.supersededTemps.append(temp) }
                try ItemRecord(Item.tombstone(key: key, version: tombstone), seq: clock.nextSeq()).write(db)
                if victim.fields != nil { try ConflictRecord.deleteAll(db, key: key) }
                effects.deleted.append(key)
                effects.unlink.append(key)
            }
        }
        try trashInsertion.finish()
        try db.execute(sql: "DELETE FROM reconcileListed WHERE peerStoreID = ?", arguments: [source])
        try db.execute(sql: "DELETE FROM reconcile WHERE peerStoreID = ?", arguments: [source])
        // This store now agrees with the source below the horizon: it must not accept there
        // what the source would refuse (a stale copy from a third node would revive a deletion).
        try db.execute(
            sql: "UPDATE meta SET gcHorizonStamp = MAX(gcHorizonStamp, ?) WHERE id = 1", arguments: [stored])
        if !effects.deleted.isEmpty {
            store.logger.notice(
                "full reconciliation deleted items the source no longer has",
                metadata: ["count": "\(effects.deleted.count)", "horizon": "\(horizon)"])
        }
        return effects
    }
}
