import Foundation
import GRDB
import HPSyncCrypto
import HPSyncModel

/// How far a store has garbage-collected its tombstones.
///
/// A key the store has no row for behaves, in the merge, as a tombstone at `(stamp, all-zero
/// origin)`: any version older than a collected deletion loses, so nothing deleted before the
/// horizon comes back. `seq` is the highest seq a collected tombstone had: a sink whose
/// checkpoint is below it missed deletions the feed no longer shows.
package struct GCHorizon: Sendable, Hashable, Codable {
    package var stamp: VersionStamp
    package var seq: Int64

    package init(stamp: VersionStamp, seq: Int64) {
        self.stamp = stamp
        self.seq = seq
    }

    package static let none = GCHorizon(stamp: .zero, seq: 0)

    /// True once a tombstone was collected (or a reconciliation adopted a source's horizon).
    package var isSet: Bool { stamp > .zero }

    /// The version an unknown key is taken to have; nil when the store never collected anything.
    package var virtualTombstone: Version? {
        isSet ? Version(stamp: stamp, origin: NodeID.zero) : nil
    }
}

/// What `collectGarbage` dropped (or would drop).
public struct GCOutcome: Sendable, Hashable, Codable {
    /// Tombstones dropped.
    public var dropped: Int
    /// Tombstones kept because they are at or after the cutoff.
    public var kept: Int
    /// The store's horizon after the run.
    package var horizon: GCHorizon
}

extension NodeID {
    /// The all-zero node ID: the origin of the virtual tombstones below a GC horizon.
    package static let zero = NodeID(bytes: [UInt8](repeating: 0, count: NodeID.byteCount))!
}

extension Store {
    /// The store's GC horizon.
    package func gcHorizon() throws -> GCHorizon {
        try read { db in try MetaRecord.load(db).gcHorizon }
    }

    /// Drops every tombstone stamped before `cutoff` in one transaction and raises the horizon.
    ///
    /// The dropped keys are remembered (key only) in the same transaction, for
    /// `collectedKeys(_:among:)`: the merge needs only the horizon, but a local import that
    /// promises never to revive a deletion must still know that the key was deleted here.
    ///
    /// The horizon stamp becomes one past the newest tombstone dropped (not `cutoff` itself: a
    /// tighter horizon makes fewer old versions lose), and the horizon seq the highest seq
    /// dropped; both only ever grow. Live items and the trash are untouched. With `dryRun` the
    /// outcome is computed and nothing is written.
    public func collectGarbage(before cutoff: VersionStamp, dryRun: Bool = false) throws -> GCOutcome {
        let limit = Int64(bitPattern: cutoff.rawValue)
        let body = { (db: Database) throws -> GCOutcome in
            var meta = try MetaRecord.load(db)
            let row = try Row.fetchOne(
                db,
                sql: """
                    SELECT COUNT(*), MAX(stamp), MAX(seq),
                      (SELECT COUNT(*) FROM item WHERE deleted = 1 AND stamp >= ?)
                    FROM item WHERE deleted = 1 AND stamp < ?
                    """, arguments: [limit, limit])!
            let dropped: Int = row[0]
            let kept: Int = row[3]
            if dropped > 0 {
                let newest: Int64 = row[1]
                let highestSeq: Int64 = row[2]
                meta.gcHorizonStamp = max(meta.gcHorizonStamp, newest + 1)
                meta.gcHorizonSeq = max(meta.gcHorizonSeq, highestSeq)
                if !dryRun {
                    try db.execute(
                        sql:
                            "INSERT OR IGNORE INTO gcCollectedKey (key) SELECT key FROM item WHERE deleted = 1 AND stamp < ?",
                        arguments: [limit])
                    // A collected tombstone's kept conflicts go with it.
                    try db.execute(
                        sql: """
                            DELETE FROM conflict WHERE key IN
                              (SELECT key FROM item WHERE deleted = 1 AND stamp < ? AND fields IS NOT NULL)
                            """,
                        arguments: [limit])
                    try db.execute(
                        sql: """
                            DELETE FROM itemFields WHERE key IN
                              (SELECT key FROM item WHERE deleted = 1 AND stamp < ? AND fields IS NOT NULL)
                            """,
                        arguments: [limit])
                    try db.execute(sql: "DELETE FROM item WHERE deleted = 1 AND stamp < ?", arguments: [limit])
                    try db.execute(
                        sql: "UPDATE meta SET gcHorizonStamp = ?, gcHorizonSeq = ? WHERE id = 1",
                        arguments: [meta.gcHorizonStamp, meta.gcHorizonSeq])
                }
            }
            return GCOutcome(dropped: dropped, kept: kept, horizon: meta.gcHorizon)
        }
        let outcome = dryRun ? try read(body) : try write(body)
        if !dryRun, outcome.dropped > 0 {
            logger.info(
                "collected tombstones",
                metadata: [
                    "dropped": "\(outcome.dropped)", "horizon": "\(outcome.horizon.stamp)",
                    "horizon_seq": "\(outcome.horizon.seq)",
                ])
        }
        return outcome
    }

    /// Which of `keys` had a tombstone here that `gc` collected (whether or not a row came back
    /// since: callers ask only about keys they found no row for).
    func collectedKeys(_ db: Database, among keys: [ItemKey]) throws -> Set<ItemKey> {
        // Most stores never collected anything: one query instead of a lookup per key.
        guard !keys.isEmpty, try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM gcCollectedKey)") == true
        else { return [] }
        let statement = try db.cachedStatement(sql: "SELECT 1 FROM gcCollectedKey WHERE key = ?")
        var result: Set<ItemKey> = []
        for key in keys where try Bool.fetchOne(statement, arguments: [key.rawValue]) != nil {
            result.insert(key)
        }
        return result
    }
}
