import Foundation
import GRDB
import HPSyncModel

/// Restamping joined items before a version-4 peer sees them (Protocol.md 5.9 "Older peers").
extension Store {
    /// Restamps every joined live item (one whose contents a field-merge join put together, so
    /// that they need not be the record its version names) as a local edit of every field: its
    /// own seq and a fresh stamp above everything, the same contents, no longer joined. A
    /// version-4 peer compares versions only; sent the joined state at its version, it could
    /// keep another record of that version for good. Returns the keys restamped, usually none.
    ///
    /// A session that sends to a version-4 peer calls it before it builds its first manifest
    /// page, so the restamped versions are in the feed that page reads.
    package func restampJoinedItems() throws -> [ItemKey] {
        // Most stores hold none: a read through the partial index, no write transaction.
        let any = try read { db in
            try Bool.fetchOne(
                db,
                sql: """
                    SELECT EXISTS (SELECT 1 FROM itemFields f JOIN item USING (key) WHERE f.fields >= x'0A' AND item.deleted = 0)
                    """)
        }
        guard any == true else { return [] }
        return try write { db in
            var clock = try ChangeClock(db, now: self.clock.nowMilliseconds())
            let rows = try ItemRecord.fetchAll(
                db,
                sql: """
                    SELECT \(ItemRecord.selection) FROM item WHERE deleted = 0 AND key IN (SELECT key FROM itemFields WHERE fields >= x'0A')
                    ORDER BY key
                    """)
            var keys: [ItemKey] = []
            for row in rows where row.joined {
                let state = try Self.mergeState(db, row)
                let replaced = VersionStamp(rawValue: UInt64(bitPattern: row.stamp))
                let version = Version(stamp: clock.nextLocalStamp(replacing: replaced), origin: nodeID)
                let restamped: ItemMergeState
                do { restamped = try state.restamped(at: version) } catch {
                    throw StoreError.database("item \(state.key): \(error)")
                }
                try Self.writeMergeState(db, restamped, seq: clock.nextSeq(), previous: row)
                keys.append(state.key)
            }
            try clock.save(db)
            return keys
        }
    }
}
